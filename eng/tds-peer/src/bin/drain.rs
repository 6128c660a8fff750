//! tds-peer-drain: a minimal raw TDS client that logs in (plaintext), sends one SQL batch and
//! drains the response as fast as possible. Measures how fast the peer streams, with no ODBC
//! driver in the way.
//!
//! usage: tds-peer-drain PORT "SQL" [--packet-size N] [--repeat K] [--step]
//! prints one line per run: `bytes=… secs=… mb_s=…`; with `--step` it waits for a line on stdin
//! before each run (bench.py reads the peer's CPU time between runs on one connection).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

fn packet(typ: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![typ, 1];
    v.extend_from_slice(&((body.len() + 8) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0, 1, 0]);
    v.extend_from_slice(body);
    v
}

fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(|u| u.to_le_bytes()).collect()
}

/// Reads one whole message; returns its payload size (and the payload if `keep`).
fn read_message(
    s: &mut TcpStream,
    buf: &mut [u8],
    keep: bool,
) -> std::io::Result<(usize, Vec<u8>)> {
    let mut total = 0;
    let mut kept = Vec::new();
    loop {
        let mut h = [0u8; 8];
        s.read_exact(&mut h)?;
        let len = u16::from_be_bytes([h[2], h[3]]) as usize - 8;
        s.read_exact(&mut buf[..len])?;
        total += len;
        if keep {
            kept.extend_from_slice(&buf[..len]);
        }
        if h[1] & 1 != 0 {
            return Ok((total, kept));
        }
    }
}

fn login7(packet_size: u32) -> Vec<u8> {
    let fields = [
        "drain",
        "sa",
        "",
        "tds-peer-drain",
        "127.0.0.1",
        "",
        "tds-peer-drain",
        "",
        "",
    ];
    let mut data = Vec::new();
    let mut offs = Vec::new();
    let mut off = 94u16;
    for (k, f) in fields.iter().enumerate() {
        let mut b = utf16(f);
        if k == 2 {
            // password scrambling: swap nibbles, XOR 0xA5
            b = b.iter().map(|x| x.rotate_left(4) ^ 0xA5).collect();
        }
        offs.push((off, f.encode_utf16().count() as u16));
        off += b.len() as u16;
        data.extend(b);
    }
    let mut v = Vec::new();
    v.extend_from_slice(&((94 + data.len()) as u32).to_le_bytes());
    v.extend_from_slice(&0x7400_0004u32.to_be_bytes());
    v.extend_from_slice(&packet_size.to_le_bytes());
    v.extend_from_slice(&[0; 12]); // prog version, pid, connection id
    v.extend_from_slice(&[0xE0, 0x03, 0, 0]);
    v.extend_from_slice(&[0; 8]); // time zone, lcid
    for (o, l) in offs {
        v.extend_from_slice(&o.to_le_bytes());
        v.extend_from_slice(&l.to_le_bytes());
    }
    v.extend_from_slice(&[0; 6]); // client id
    v.extend_from_slice(&[0; 16]); // sspi, atchdbfile, changepassword, cbsspilong
    v.extend(data);
    v
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: tds-peer-drain PORT \"SQL\" [--packet-size N] [--repeat K] [--step]");
        std::process::exit(2);
    }
    let port: u16 = args[1].parse().expect("port");
    let sql = &args[2];
    let opt = |name: &str, d: u32| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let psize = opt("--packet-size", 32767);
    let repeat = opt("--repeat", 1);
    let step = args.iter().any(|a| a == "--step");
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_nodelay(true).ok();
    let mut buf = vec![0u8; 65536];
    // PRELOGIN: VERSION + ENCRYPTION=NOT_SUP
    let pre = [0u8, 0, 11, 0, 6, 1, 0, 17, 0, 1, 0xFF, 16, 0, 0, 0, 0, 0, 2];
    s.write_all(&packet(0x12, &pre)).unwrap();
    read_message(&mut s, &mut buf, false).expect("prelogin reply");
    s.write_all(&packet(0x10, &login7(psize))).unwrap();
    let (_, login) = read_message(&mut s, &mut buf, true).expect("login reply");
    if !login.contains(&0xAD) {
        eprintln!("login failed");
        std::process::exit(1);
    }
    // SQL batch with ALL_HEADERS (transaction descriptor header).
    let mut body = Vec::new();
    body.extend_from_slice(&22u32.to_le_bytes());
    body.extend_from_slice(&18u32.to_le_bytes());
    body.extend_from_slice(&2u16.to_le_bytes());
    body.extend_from_slice(&[0; 8]);
    body.extend_from_slice(&1u32.to_le_bytes());
    body.extend(utf16(sql));
    let mut req = Vec::new();
    let max = psize.max(512) as usize - 8;
    let chunks: Vec<&[u8]> = body.chunks(max).collect();
    for (i, c) in chunks.iter().enumerate() {
        let mut p = packet(0x01, c);
        p[1] = (i + 1 == chunks.len()) as u8;
        req.extend(p);
    }
    for _ in 0..repeat {
        if step {
            let mut line = String::new();
            if std::io::stdin().read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
        }
        let t = Instant::now();
        s.write_all(&req).unwrap();
        let (n, _) = read_message(&mut s, &mut buf, false).expect("response");
        let secs = t.elapsed().as_secs_f64();
        println!("bytes={n} secs={secs:.4} mb_s={:.1}", n as f64 / secs / 1e6);
        std::io::stdout().flush().ok();
    }
}
