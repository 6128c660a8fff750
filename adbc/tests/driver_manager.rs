//! The driver loaded with no Python anywhere: the Rust ADBC driver manager opens the built
//! `libadbc_driver_ferrodbc.so` by path (as R, DuckDB or a C++ program would), then a query,
//! parameters, GetInfo and GetObjects on SQLite3 ODBC, and on the TDS peer through Driver 18 and
//! FreeTDS when the peer is built (`target/release/tds-peer`; in CI it is, and a missing one
//! fails).

use adbc_core::Optionable;
use adbc_core::options::{
    AdbcVersion, InfoCode, ObjectDepth, OptionDatabase, OptionStatement, OptionValue,
};
use adbc_core::{Connection, Database, Driver, Statement};
use adbc_driver_manager::ManagedDriver;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Int64Array, RecordBatch};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// target/<profile>/: the test binary is target/<profile>/deps/driver_manager-<hash>.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The cdylib of this profile. `cargo test` builds the crate's rlib only, so the shared library
/// is built here (once per test binary), by the cargo running the tests: never a stale one.
fn library() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile = target_dir()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "-q", "-p", "adbc_driver_ferrodbc", "--lib"]);
            if profile == "release" {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("cargo runs");
            assert!(status.success(), "cargo build of the cdylib failed");
            let lib = target_dir().join("libadbc_driver_ferrodbc.so");
            assert!(lib.exists(), "{} is not built", lib.display());
            lib
        })
        .clone()
}

fn driver() -> ManagedDriver {
    ManagedDriver::load_dynamic_from_filename(
        library(),
        Some(b"AdbcDriverFerrodbcInit"),
        AdbcVersion::V110,
    )
    .expect("the driver loads")
}

fn sqlite_available() -> bool {
    std::fs::read_to_string("/etc/odbcinst.ini").is_ok_and(|s| s.contains("[SQLite3]"))
}

fn connect(uri: &str) -> impl Connection + use<> {
    let mut driver = driver();
    let db = driver
        .new_database_with_opts([(OptionDatabase::Uri, OptionValue::String(uri.into()))])
        .expect("database");
    db.new_connection().expect("connection")
}

fn query(conn: &mut impl Connection, sql: &str) -> Vec<RecordBatch> {
    let mut stmt = conn.new_statement().unwrap();
    stmt.set_sql_query(sql).unwrap();
    stmt.execute().unwrap().collect::<Result<_, _>>().unwrap()
}

fn check_connection(conn: &mut impl Connection, vendor: &str) {
    let batches = query(conn, "SELECT 40 + 2 AS answer");
    let col = batches[0].column(0);
    let v: i64 = match col.data_type() {
        arrow_schema::DataType::Int32 => col
            .as_primitive::<arrow_array::types::Int32Type>()
            .value(0)
            .into(),
        _ => col.as_primitive::<Int64Type>().value(0),
    };
    assert_eq!(v, 42);

    // A parameter bound from Arrow.
    let mut stmt = conn.new_statement().unwrap();
    stmt.set_sql_query("SELECT ? AS x").unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "0",
        arrow_schema::DataType::Int64,
        true,
    )]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![7]))]).unwrap();
    stmt.bind(batch).unwrap();
    let out: Vec<RecordBatch> = stmt.execute().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(out.iter().map(RecordBatch::num_rows).sum::<usize>(), 1);

    // GetInfo: the vendor from the server.
    let info: Vec<RecordBatch> = conn
        .get_info(Some([InfoCode::VendorName].into()))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let union = info[0].column(1).as_union();
    let name = union.value(0);
    let name = name.as_string::<i32>().value(0).to_string();
    assert!(name.to_lowercase().contains(vendor), "{name}");

    // GetObjects at catalog depth answers.
    let objs: Vec<RecordBatch> = conn
        .get_objects(ObjectDepth::Catalogs, None, None, None, None, None)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!objs.is_empty());

    // Bulk ingest: a table created from an Arrow batch and read back.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let table = format!("ingest_{}_{n}", std::process::id());
    let mut stmt = conn.new_statement().unwrap();
    stmt.set_option(
        OptionStatement::TargetTable,
        OptionValue::String(table.clone()),
    )
    .unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "v",
        arrow_schema::DataType::Int64,
        false,
    )]));
    let batch =
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))]).unwrap();
    stmt.bind(batch).unwrap();
    assert_eq!(stmt.execute_update().unwrap(), Some(3));
    let sum = query(conn, &format!("SELECT SUM(v) FROM {table}"));
    assert_eq!(sum.iter().map(RecordBatch::num_rows).sum::<usize>(), 1);
    let mut stmt = conn.new_statement().unwrap();
    stmt.set_sql_query(format!("DROP TABLE {table}")).unwrap();
    stmt.execute_update().unwrap();

    // An error carries the SQLSTATE.
    let mut stmt = conn.new_statement().unwrap();
    stmt.set_sql_query("SELECT * FROM no_such_table_anywhere")
        .unwrap();
    let err = stmt.execute().err().expect("an error");
    assert_ne!(err.sqlstate, [0; 5], "{err}");
}

#[test]
fn sqlite3_odbc_through_the_rust_driver_manager() {
    if !sqlite_available() {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true and SQLite3 ODBC is not registered"
        );
        eprintln!("skipped: SQLite3 ODBC is not registered");
        return;
    }
    let dir = std::env::temp_dir().join(format!("adbc-rs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut conn = connect(&format!(
        "Driver={{SQLite3}};Database={}/t.db",
        dir.display()
    ));
    check_connection(&mut conn, "sqlite");
}

/// A driver manifest (`ferrodbc.toml`, what `python -m adbc_driver_ferrodbc.manifest` writes)
/// lets the driver manager find the driver by name, with no Python: the manifest search that
/// R's adbcdrivermanager and DuckDB's ADBC extensions share (arrow-adbc's driver managers).
#[test]
fn the_manifest_finds_the_driver_by_name() {
    let dir = std::env::temp_dir().join(format!("adbc-manifest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = library()
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    std::fs::write(
        dir.join("ferrodbc.toml"),
        format!(
            "manifest_version = 1\nname = \"ferrodbc\"\n\n[ADBC]\nversion = \"1.1.0\"\n\n[Driver]\nshared = \"{lib}\"\nentrypoint = \"AdbcDriverFerrodbcInit\"\n"
        ),
    )
    .unwrap();
    let mut driver = ManagedDriver::load_from_name(
        "ferrodbc",
        None,
        AdbcVersion::V110,
        adbc_core::LOAD_FLAG_DEFAULT,
        Some(vec![dir.clone()]),
    )
    .expect("the manifest names the driver");
    let db = driver.new_database().unwrap();
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

/// psqlODBC against the shared PostgreSQL that eng/peers/postgres.sh starts (port 54329), or
/// `$FERRODBC_PG_CONNSTR`.
#[test]
fn psqlodbc_through_the_rust_driver_manager() {
    let uri = std::env::var("FERRODBC_PG_CONNSTR").unwrap_or_else(|_| {
        "Driver={PostgreSQL Unicode};Server=127.0.0.1;Port=54329;Database=odbcdb;Uid=odbcu;Pwd=pw"
            .into()
    });
    let registered = std::fs::read_to_string("/etc/odbcinst.ini")
        .is_ok_and(|s| s.contains("[PostgreSQL Unicode]"));
    let db = driver()
        .new_database_with_opts([(OptionDatabase::Uri, OptionValue::String(uri))])
        .unwrap();
    let conn = if registered {
        db.new_connection().ok()
    } else {
        None
    };
    let Some(mut conn) = conn else {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true and PostgreSQL (psqlODBC, port 54329) is not reachable"
        );
        eprintln!("skipped: PostgreSQL through psqlODBC is not reachable");
        return;
    };
    check_connection(&mut conn, "postgresql");
}

struct Peer(Child, u16);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_peer() -> Option<Peer> {
    let exe = std::env::var_os("TDS_PEER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().parent().unwrap().join("release/tds-peer"));
    if !exe.exists() {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true and {} is not built",
            exe.display()
        );
        eprintln!("skipped: {} is not built", exe.display());
        return None;
    }
    let cert_dir = std::env::temp_dir().join(format!("adbc-rs-peer-{}", std::process::id()));
    std::fs::create_dir_all(&cert_dir).unwrap();
    let mut child = Command::new(exe)
        .args([
            "--port",
            "0",
            "--encrypt",
            "notsup",
            "--exit-on-stdin-eof",
            "--cert-dir",
        ])
        .arg(&cert_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("unexpected peer banner {line:?}"));
    Some(Peer(child, port))
}

#[test]
fn tds_peer_through_driver_18_and_freetds() {
    let Some(peer) = start_peer() else { return };
    let odbcinst = std::fs::read_to_string("/etc/odbcinst.ini").unwrap_or_default();
    let mut ran = 0;
    if odbcinst.contains("[ODBC Driver 18 for SQL Server]") {
        let mut conn = connect(&format!("mssql://sa:x@127.0.0.1:{}/?Encrypt=no", peer.1));
        check_connection(&mut conn, "sql server");
        ran += 1;
    }
    if odbcinst.contains("[FreeTDS]") {
        let mut conn = connect(&format!(
            "Driver={{FreeTDS}};Server=127.0.0.1;Port={};UID=sa;PWD=x;TDS_Version=7.4;Encryption=off",
            peer.1
        ));
        check_connection(&mut conn, "sql server");
        ran += 1;
    }
    assert!(
        ran > 0 || std::env::var("CI").is_err(),
        "CI=true and no SQL Server driver"
    );
}
