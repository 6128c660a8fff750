//! A connection: the driver's connection handle, its DBMS, and the transaction mode.

use crate::backend::{Backend, Dbms, Driver};
use crate::error::{Error, Result};
use crate::info::{AttrValue, InfoKind, InfoValue};
use crate::odbc::sys::InfoType;
use crate::odbc::{Dbc, Stmt};

pub struct Connection {
    dbc: Dbc,
    backend: Backend,
    dbms_name: String,
    autocommit: bool,
    /// `SQL_COPT_SS_BCP` was on when the connection was made: the driver's bcp API works on it.
    bcp_on: bool,
}

/// Reject connection strings the driver manager would misparse or silently truncate.
pub fn validate_connection_string(s: &str) -> Result<()> {
    if s.trim().is_empty() {
        return Err(Error::Interface("the connection string is empty".into()));
    }
    if s.contains('\0') {
        return Err(Error::Interface(
            "the connection string contains a NUL character".into(),
        ));
    }
    // Values may be wrapped in {...}; a '}' inside is written '}}'. An unclosed brace makes the
    // driver manager read the rest of the string as one value. (Other oddities, such as a
    // segment with no '=', are the driver's to judge, as before.)
    if let Err(e @ crate::connstr::Malformed::Unclosed(_)) = crate::connstr::parse_attributes(s) {
        return Err(e.into());
    }
    if s.len() > 32_000 {
        return Err(Error::Interface(
            "the connection string is longer than ODBC allows".into(),
        ));
    }
    Ok(())
}

/// Whether the driver can read again a cell its bound buffer cut, on a static cursor: it allows
/// SQLGetData on bound columns (`SQL_GD_BOUND`) and its static cursors fetch by absolute position
/// (`SQL_CA1_ABSOLUTE`). Asked once per connection; each statement then checks that its cursor
/// is static. Seen: SQLite3 ODBC 0.9998 yes (static is its default cursor); psqlODBC 13 yes;
/// Driver 18 and FreeTDS 1.3 no (`SQL_GD_BLOCK` only).
fn can_reread(dbc: &Dbc) -> bool {
    const GD_BOUND: u32 = 0x8;
    const CA1_ABSOLUTE: u32 = 0x2;
    let getdata = dbc.info_u32(InfoType::GetDataExtensions).unwrap_or(0);
    let scroll = dbc.info_u32(InfoType::StaticCursorAttributes1).unwrap_or(0);
    getdata & GD_BOUND != 0 && scroll & CA1_ABSOLUTE != 0
}

impl Connection {
    pub fn connect(
        connection_string: &str,
        autocommit: bool,
        login_timeout_sec: Option<u32>,
    ) -> Result<Connection> {
        Self::connect_with_attrs(connection_string, autocommit, login_timeout_sec, &[])
    }

    /// [`Connection::connect`], setting `attrs_before` on the handle before it connects.
    pub fn connect_with_attrs(
        connection_string: &str,
        autocommit: bool,
        login_timeout_sec: Option<u32>,
        attrs_before: &[(i32, AttrValue)],
    ) -> Result<Connection> {
        validate_connection_string(connection_string)?;
        let with_bcp;
        let attrs_before = match crate::bulk::bcp_attr_for(connection_string, attrs_before) {
            Some(attr) => {
                with_bcp = [attrs_before, &[attr]].concat();
                &with_bcp[..]
            }
            None => attrs_before,
        };
        let bcp_on = attrs_before.iter().any(|(a, v)| {
            *a == crate::odbc::bcp::SQL_COPT_SS_BCP
                && *v == AttrValue::Int(crate::odbc::bcp::SQL_BCP_ON)
        });
        let mut dbc = Dbc::connect(connection_string, login_timeout_sec, attrs_before)?;
        let dbms_name = dbc.info_string(InfoType::DbmsName).unwrap_or_default();
        let dbms = Dbms::from_name(&dbms_name);
        let driver =
            Driver::from_file_name(&dbc.info_string(InfoType::DriverName).unwrap_or_default());
        // Only where declared sizes are not enforced is there anything to read again.
        let reread = dbms == Dbms::Sqlite && can_reread(&dbc);
        // ODBC starts in autocommit; PEP 249 expects manual commit unless asked otherwise.
        if !autocommit {
            dbc.set_autocommit(false)?;
        }
        Ok(Connection {
            dbc,
            backend: Backend {
                dbms,
                driver,
                reread,
                vectors: driver == Driver::MsOdbc
                    && crate::types::vector::asks_native(connection_string),
            },
            dbms_name,
            autocommit,
            bcp_on,
        })
    }

    /// The connection handle, for the driver's bcp API (`crate::bulk`).
    pub fn dbc(&self) -> &Dbc {
        &self.dbc
    }

    /// The handle, held exclusively for a bulk load (which makes it `Send` to a thread
    /// without the GIL).
    pub fn dbc_mut(&mut self) -> &mut Dbc {
        &mut self.dbc
    }

    /// Whether the driver's bcp API is enabled on this connection (set before it connected).
    pub fn bcp_on(&self) -> bool {
        self.bcp_on
    }

    pub fn dbms(&self) -> Dbms {
        self.backend.dbms
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn dbms_name(&self) -> &str {
        &self.dbms_name
    }

    pub fn driver_name(&self) -> String {
        self.dbc
            .info_string(InfoType::DriverName)
            .unwrap_or_default()
    }

    /// `SQLGetInfo(info_type)`, read as `kind` says.
    pub fn info(&self, info_type: u16, kind: InfoKind) -> Result<InfoValue> {
        self.dbc.info(info_type, kind)
    }

    /// `SQLSetConnectAttr(attr, value)` (pyodbc's `set_attr`).
    pub fn set_attr(&mut self, attr: i32, value: &AttrValue) -> Result<()> {
        self.dbc.set_attr(attr, value)
    }

    /// The connection handle's address (pyodbc's `hdbc`).
    pub fn handle_address(&self) -> usize {
        self.dbc.as_sys().0 as usize
    }

    pub fn autocommit(&self) -> bool {
        self.autocommit
    }

    /// Switching autocommit on commits the open transaction (ODBC semantics).
    pub fn set_autocommit(&mut self, on: bool) -> Result<()> {
        if on && !self.autocommit {
            // ODBC says switching autocommit on commits the open transaction; FreeTDS 1.3 does
            // not (the transaction stayed open against the TDS peer), so commit explicitly.
            self.dbc.end_transaction(true)?;
        }
        self.dbc.set_autocommit(on)?;
        self.autocommit = on;
        Ok(())
    }

    pub fn commit(&mut self) -> Result<()> {
        if self.autocommit {
            return Ok(());
        }
        self.dbc.end_transaction(true)
    }

    pub fn rollback(&mut self) -> Result<()> {
        if self.autocommit {
            return Ok(());
        }
        self.dbc.end_transaction(false)
    }

    pub fn new_statement(&self) -> Result<Stmt> {
        Stmt::new(&self.dbc)
    }

    pub fn is_dead(&self) -> bool {
        self.dbc.is_dead()
    }

    /// Whether this process opened the connection (false in a forked child: `crate::process`).
    pub fn owned_here(&self) -> bool {
        self.dbc.owned_here()
    }

    /// Whether the session can be reset for a next user: SQL Server through Microsoft's driver,
    /// whose SQL_COPT_SS_RESET_CONNECTION makes the next request run sp_reset_connection.
    /// FreeTDS and other DBMS have no such reset, so they are never pooled.
    pub fn poolable(&self) -> bool {
        self.backend.dbms == Dbms::SqlServer && self.backend.driver == Driver::MsOdbc
    }

    /// Leave the connection as a new user must find it: the open transaction rolled back, and
    /// (on the next request) the server session reset.
    pub fn reset_for_reuse(&mut self) -> Result<()> {
        /// `SQL_COPT_SS_RESET_CONNECTION` (msodbcsql.h: `SQL_COPT_SS_BASE_EX + 6` = 1246) with
        /// `SQL_RESET_CONNECTION_YES`: the driver flags its next packet RESETCONNECTION. (1204,
        /// used here before, is SQL_COPT_SS_PRESERVE_CURSORS: sessions went out unreset.)
        const SS_RESET_CONNECTION: i32 = 1246;
        if !self.autocommit {
            self.dbc.end_transaction(false)?;
        }
        self.dbc.set_attr_uint(
            crate::odbc::sys::ConnectionAttribute(SS_RESET_CONNECTION),
            1,
        )
    }

    /// One round trip (`SELECT 1`): whether the server still answers. The pool asks before it
    /// hands a parked session on: neither Driver 18 nor FreeTDS notices a session the server
    /// ended (KILL, failover, idle cut) until a request fails, so SQL_ATTR_CONNECTION_DEAD
    /// alone let a killed session through to the user's first execute.
    pub fn ping(&self) -> Result<()> {
        crate::counters::bump(&crate::counters::POOL_CHECKS);
        let mut stmt = self.new_statement()?;
        stmt.exec_direct("SELECT 1")?;
        Ok(())
    }

    /// Roll back, disconnect, free. All statements must have been freed first.
    pub fn close(mut self) -> Result<()> {
        self.dbc.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_string_validation() {
        assert!(validate_connection_string("Driver={SQLite3};Database=:memory:").is_ok());
        assert!(validate_connection_string("PWD={a;b}}c};X=1").is_ok());
        // A brace only opens a value at its start: `a{b` is a plain value.
        assert!(validate_connection_string("PWD=a{b;X=1").is_ok());
        assert!(validate_connection_string("PWD={a}};X=1").is_err());
        assert!(matches!(
            validate_connection_string("Driver={SQLite3;Database=x"),
            Err(Error::Interface(_))
        ));
        assert!(matches!(
            validate_connection_string("  "),
            Err(Error::Interface(_))
        ));
        assert!(matches!(
            validate_connection_string("a\0b"),
            Err(Error::Interface(_))
        ));
    }
}
