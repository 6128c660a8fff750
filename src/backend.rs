//! What sits behind the connection, the database and the ODBC driver in front of it: every
//! decision that differs per backend (types, parameter forms, driver quirks) asks this.

/// Which database is behind the driver: a few type decisions depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dbms {
    SqlServer,
    PostgreSql,
    Sqlite,
    Other,
}

impl Dbms {
    pub fn from_name(name: &str) -> Dbms {
        let lower = name.to_ascii_lowercase();
        if lower.contains("sql server") {
            Dbms::SqlServer
        } else if lower.contains("postgres") {
            Dbms::PostgreSql
        } else if lower.contains("sqlite") {
            Dbms::Sqlite
        } else {
            Dbms::Other
        }
    }
}

/// Which ODBC driver speaks to the database: a few SQL Server C types are Microsoft-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// Microsoft ODBC Driver 17/18 (`libmsodbcsql`).
    MsOdbc,
    /// FreeTDS (`libtdsodbc`): rejects `SQL_C_SS_TIME2`, `SQL_C_SS_TIMESTAMPOFFSET` (HY003) and
    /// `SQL_CA_SS_VARIANT_TYPE` (HY091), as seen against the TDS peer.
    FreeTds,
    Other,
}

impl Driver {
    /// The driver a connection string's `DRIVER=` value names: a registered name
    /// (`ODBC Driver 18 for SQL Server`, `FreeTDS`) or a library path.
    pub fn from_driver_keyword(value: &str) -> Driver {
        let lower = value.to_ascii_lowercase();
        if lower.contains("odbc driver 17 for sql server")
            || lower.contains("odbc driver 18 for sql server")
        {
            Driver::MsOdbc
        } else if lower.contains("freetds") {
            Driver::FreeTds
        } else {
            Driver::from_file_name(&lower)
        }
    }

    pub fn from_file_name(name: &str) -> Driver {
        let lower = name.to_ascii_lowercase();
        if lower.contains("msodbcsql") {
            Driver::MsOdbc
        } else if lower.contains("tdsodbc") {
            Driver::FreeTds
        } else {
            Driver::Other
        }
    }
}

/// The database and the driver in front of it: everything type decisions depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backend {
    pub dbms: Dbms,
    pub driver: Driver,
    /// A cell its bound buffer cut can be read again whole: the statement's cursor is scrollable
    /// (`SQLFetchScroll(SQL_FETCH_ABSOLUTE)`) and the driver allows SQLGetData on a bound column
    /// (`SQL_GD_BOUND`). See `reread.rs` for why this, and not SQLSetPos, and which drivers.
    pub reread: bool,
    /// The connection asked Driver 18 for native vectors (`VectorTypeSupport=v1`): vector
    /// parameters bind as `SQL_SS_VECTOR`, else as JSON text (`types/vector/`).
    pub vectors: bool,
}

impl Backend {
    /// Whether the SQL Server extension C types (`SQL_C_SS_TIME2`, `..._TIMESTAMPOFFSET`,
    /// `SQL_CA_SS_VARIANT_TYPE`) may be used.
    pub fn ss_c_types(self) -> bool {
        self.dbms == Dbms::SqlServer && self.driver != Driver::FreeTds
    }

    /// Whether every record behind a SUCCESS_WITH_INFO is a message. psqlODBC files a server
    /// NOTICE under the notice's own SQLSTATE (`CREATE TABLE IF NOT EXISTS` on a table that
    /// exists: 42P07 "... already exists, skipping"), and PostgreSQL never reports a failure
    /// that way, so its records are messages whatever their class, as pyodbc treats them.
    /// FreeTDS does report a rejected statement of a batch as an error record there.
    pub fn info_is_message(self) -> bool {
        self.dbms == Dbms::PostgreSql
    }

    /// Whether a short row array is the end of the result set. FreeTDS fills an array up to the
    /// result's DONE and reports an error after rows with that same fetch; one more SQLFetch
    /// there steps over the PRINT messages that precede the next result and loses them (the
    /// fetch returns SQL_NO_DATA, and unixODBC shows no records behind that).
    pub fn ends_on_short_array(self) -> bool {
        self.driver == Driver::FreeTds
    }

    /// Whether the database enforces declared text and binary lengths. SQLite does not: a
    /// VARCHAR(10) may hold a megabyte, and a column without a type is reported as VARCHAR(255).
    pub fn sizes_trusted(self) -> bool {
        self.dbms != Dbms::Sqlite
    }

    /// Whether a bounded column of this backend may be bound by its declared size.
    pub fn may_bind_declared(self) -> bool {
        self.sizes_trusted() || self.reread
    }
}

impl Backend {
    /// A backend with every optional capability off; set the others with struct update syntax
    /// (`Backend { reread: true, ..Backend::new(dbms, driver) }`), so a new field is one line
    /// here, not one in every literal.
    pub const fn new(dbms: Dbms, driver: Driver) -> Backend {
        Backend {
            dbms,
            driver,
            reread: false,
            vectors: false,
        }
    }
}

impl From<Dbms> for Backend {
    fn from(dbms: Dbms) -> Backend {
        Backend::new(dbms, Driver::Other)
    }
}
