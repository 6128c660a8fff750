//! tds-peer: a SQL-Server-compatible TDS 7.4 server backed by SQLite, for testing real ODBC
//! drivers (msodbcsql18, FreeTDS) without a SQL Server. See README.md.

use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};
use tds_peer::session::{self, Config, Encrypt};
use tds_peer::sql::engine::Shared;
use tds_peer::{synthetic, tls};

const USAGE: &str = "usage: tds-peer [--port N] [--encrypt notsup|off|on|strict] [--db FILE] [--password PW] [--cert-dir DIR] [--prewarm TABLE[,TABLE…]] [--result-cache-mb N] [--exit-on-stdin-eof] [--fedauth-key HEX] [--fail-logins CODE:N] [--bulk-discard] [--insert-discard] [--chaos RATE[,seed=N][,stall=SECS][,login=RATE]] [--verbose]";

struct Args {
    port: u16,
    encrypt: Encrypt,
    db: Option<String>,
    password: Option<String>,
    cert_dir: Option<PathBuf>,
    prewarm: Vec<String>,
    result_cache_mb: usize,
    exit_on_stdin_eof: bool,
    bulk_discard: bool,
    insert_discard: bool,
    verbose: bool,
    fedauth: Option<tds_peer::fedauth::Verifier>,
    transient: tds_peer::transient::Switches,
    chaos: Option<tds_peer::chaos::Chaos>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        port: 0,
        encrypt: Encrypt::NotSup,
        db: None,
        password: None,
        cert_dir: None,
        prewarm: Vec::new(),
        result_cache_mb: 64,
        exit_on_stdin_eof: false,
        bulk_discard: false,
        insert_discard: false,
        verbose: false,
        fedauth: None,
        transient: Default::default(),
        chaos: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut val = || {
            it.next()
                .ok_or_else(|| format!("{k} needs a value\n{USAGE}"))
        };
        match k.as_str() {
            "--port" => a.port = val()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--encrypt" => {
                a.encrypt = match val()?.as_str() {
                    "notsup" => Encrypt::NotSup,
                    "off" => Encrypt::Off,
                    "on" => Encrypt::On,
                    "strict" => Encrypt::Strict,
                    o => return Err(format!("--encrypt: unknown mode {o}\n{USAGE}")),
                }
            }
            "--db" => a.db = Some(val()?),
            "--password" => a.password = Some(val()?),
            "--cert-dir" => a.cert_dir = Some(PathBuf::from(val()?)),
            "--prewarm" => a.prewarm.extend(
                val()?
                    .split(',')
                    .map(|s| s.trim().trim_start_matches("peer.").to_string()),
            ),
            "--result-cache-mb" => {
                a.result_cache_mb = val()?
                    .parse()
                    .map_err(|e| format!("--result-cache-mb: {e}"))?
            }
            "--exit-on-stdin-eof" => a.exit_on_stdin_eof = true,
            "--fedauth-key" => a.fedauth = Some(tds_peer::fedauth::Verifier::from_hex(&val()?)?),
            "--fail-logins" => a.transient.parse_fail_logins(&val()?)?,
            "--bulk-discard" => a.bulk_discard = true,
            "--insert-discard" => a.insert_discard = true,
            "--chaos" => a.chaos = Some(tds_peer::chaos::Chaos::parse(&val()?)?),
            "--verbose" | "-v" => a.verbose = true,
            "--help" | "-h" => return Err(USAGE.to_string()),
            o => return Err(format!("unknown argument {o}\n{USAGE}")),
        }
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let verbose = args.verbose || std::env::var_os("TDS_PEER_VERBOSE").is_some();
    // Work dir: certificate (and the default database) live here.
    let work = args
        .cert_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("tds-peer-{}", std::process::id())));
    let certs = tls::generate(&work).unwrap_or_else(|e| {
        eprintln!(
            "tds-peer: cannot write certificate under {}: {e}",
            work.display()
        );
        std::process::exit(1);
    });
    eprintln!("tds-peer: certificate {}", certs.pem_path.display());
    let db_path = match &args.db {
        Some(p) => p.clone(),
        None => {
            let p = work.join("tds-peer.sqlite3");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
            }
            p.display().to_string()
        }
    };
    eprintln!("tds-peer: database {db_path}");
    let listener = TcpListener::bind(("127.0.0.1", args.port)).unwrap_or_else(|e| {
        eprintln!("tds-peer: bind 127.0.0.1:{}: {e}", args.port);
        std::process::exit(1);
    });
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let cfg = Arc::new(Config {
        encrypt: args.encrypt,
        password: args.password,
        tls: tls::configs(&certs),
        shared: Arc::new(Shared {
            db_path,
            synth: Default::default(),
            result_cache_bytes: args.result_cache_mb << 20,
            verbose,
            sessions: Default::default(),
            bulk_discard: args.bulk_discard,
            insert_discard: args.insert_discard,
            inserts_discarded: Default::default(),
            locks: Default::default(),
        }),
        verbose,
        fedauth: args.fedauth,
        transient: args.transient,
        chaos: args.chaos,
    });
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "tds-peer listening on 127.0.0.1:{port}");
        let _ = out.flush();
    }
    eprintln!("tds-peer: encrypt={:?}", args.encrypt);
    if !args.prewarm.is_empty() {
        // Encode in the background: connections are served meanwhile (a query for a table
        // still being encoded just generates it itself).
        let shared = cfg.shared.clone();
        let tables = args.prewarm.clone();
        std::thread::spawn(move || {
            for t in tables {
                let start = std::time::Instant::now();
                match synthetic::prewarm(&shared.synth, &t) {
                    Ok(n) => eprintln!(
                        "tds-peer: prewarmed peer.{t}: {n} bytes in {:.2} s",
                        start.elapsed().as_secs_f64()
                    ),
                    Err(e) => eprintln!("tds-peer: prewarm {t}: {e}"),
                }
            }
        });
    }
    if args.exit_on_stdin_eof {
        // The test fixture holds our stdin open: when its process dies (even by SIGKILL or
        // os._exit), stdin reaches EOF and the peer exits instead of lingering as an orphan.
        std::thread::spawn(|| {
            let mut sink = [0u8; 256];
            let mut stdin = std::io::stdin().lock();
            while let Ok(n) = std::io::Read::read(&mut stdin, &mut sink) {
                if n == 0 {
                    break;
                }
            }
            // Not eprintln!: stderr may be a closed pipe now, and a failed print would panic
            // this thread instead of exiting.
            let _ = writeln!(std::io::stderr(), "tds-peer: stdin closed, exiting");
            std::process::exit(0);
        });
    }
    let spids = AtomicU16::new(51);
    for conn in listener.incoming() {
        let Ok(tcp) = conn else { continue };
        let spid = spids.fetch_add(1, Ordering::Relaxed);
        let cfg = cfg.clone();
        std::thread::spawn(move || session::serve(tcp, cfg, spid));
    }
}
