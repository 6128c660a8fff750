//! TLS: a self-signed certificate made at start-up, rustls server configs for TDS 7.x
//! (TLS 1.2 only: both drivers stall on TLS 1.3 inside PRELOGIN packets) and for TDS 8 strict
//! (TLS 1.3 first, ALPN `tds/8.0`), and the PRELOGIN-wrapped handshake of TDS 7.x.

use crate::io::{Io, Prefixed, Stream, proto_err};
use crate::packet::P_PRELOGIN;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Certs {
    pub cert_der: Vec<u8>,
    pub key_der: Vec<u8>,
    pub pem_path: PathBuf,
}

/// Generates the certificate (SAN DNS:localhost, IP:127.0.0.1) and writes it as PEM to
/// `<dir>/tds-peer-cert.pem` (key beside it as `tds-peer-key.pem`).
pub fn generate(dir: &Path) -> io::Result<Certs> {
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(|e| io::Error::other(e.to_string()))?;
    std::fs::create_dir_all(dir)?;
    let pem_path = dir.join("tds-peer-cert.pem");
    std::fs::write(&pem_path, ck.cert.pem())?;
    std::fs::write(dir.join("tds-peer-key.pem"), ck.signing_key.serialize_pem())?;
    Ok(Certs {
        cert_der: ck.cert.der().to_vec(),
        key_der: ck.signing_key.serialize_der(),
        pem_path,
    })
}

fn config(
    certs: &Certs,
    versions: &[&'static rustls::SupportedProtocolVersion],
    alpn: Option<&[u8]>,
) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(certs.cert_der.clone())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certs.key_der.clone())),
        )
        .expect("certificate");
    if let Some(a) = alpn {
        cfg.alpn_protocols = vec![a.to_vec()];
    }
    Arc::new(cfg)
}

pub struct Configs {
    pub tds7: Arc<ServerConfig>,
    pub strict: Arc<ServerConfig>,
}

pub fn configs(certs: &Certs) -> Configs {
    Configs {
        tds7: config(certs, &[&rustls::version::TLS12], None),
        strict: config(
            certs,
            &[&rustls::version::TLS13, &rustls::version::TLS12],
            Some(b"tds/8.0"),
        ),
    }
}

fn tls_err(e: rustls::Error) -> io::Error {
    proto_err(format!("TLS: {e}"))
}

/// TDS 7.x handshake: the records of both sides travel in PRELOGIN (0x12) packets, as SQL
/// Server sends them since TDS 7.2 (MS-TDS 3.2.5.2: the client passes on "a TLS/SSL response
/// message (TDS packet type 0x12)"). Only the PRELOGIN *reply* before it is TABULAR RESULT
/// (0x04). Driver 18 and FreeTDS accept either type; tiberius (connectorx) and go-mssqldb accept
/// only 0x12, tiberius asserting on anything else. Afterwards TLS records flow raw.
pub fn tds7_handshake(io: &mut Io, cfg: Arc<ServerConfig>) -> io::Result<()> {
    let mut conn = ServerConnection::new(cfg).map_err(tls_err)?;
    loop {
        if conn.wants_write() {
            let mut out = Vec::new();
            while conn.wants_write() {
                conn.write_tls(&mut out)?;
            }
            io.send_message(P_PRELOGIN, &out, 4096)?;
        }
        if !conn.is_handshaking() {
            break;
        }
        let (typ, data) = io.read_message()?;
        if typ != P_PRELOGIN {
            return Err(proto_err(format!(
                "expected PRELOGIN-wrapped TLS, got packet type {typ:#x}"
            )));
        }
        let mut rd = &data[..];
        while !rd.is_empty() {
            conn.read_tls(&mut rd)?;
            conn.process_new_packets().map_err(tls_err)?;
        }
    }
    let pre = io.take_buffered();
    let Stream::Plain(p) = std::mem::replace(&mut io.stream, Stream::Gone) else {
        return Err(proto_err("TLS already active"));
    };
    let mut prefix = p.pre;
    prefix.extend_from_slice(&pre);
    io.stream = Stream::Tls(Box::new(StreamOwned::new(
        conn,
        Prefixed {
            pre: prefix,
            tcp: p.tcp,
        },
    )));
    Ok(())
}

/// Login-only encryption: back to plaintext after LOGIN7.
pub fn drop_tls(io: &mut Io) {
    if let Stream::Tls(s) = std::mem::replace(&mut io.stream, Stream::Gone) {
        let (_conn, sock) = s.into_parts();
        io.stream = Stream::Plain(sock);
    }
}

/// TDS 8 strict: TLS from the first byte (rustls completes the handshake on first read).
pub fn strict_start(io: &mut Io, cfg: Arc<ServerConfig>) -> io::Result<()> {
    let conn = ServerConnection::new(cfg).map_err(tls_err)?;
    if let Stream::Plain(p) = std::mem::replace(&mut io.stream, Stream::Gone) {
        io.stream = Stream::Tls(Box::new(StreamOwned::new(conn, p)));
    }
    Ok(())
}
