//! `AdbcDatabase`: where to connect. Options: `uri` (an ODBC connection string, or the URL form
//! of `uri.rs`), `username` / `password` (added as `UID` / `PWD`), and ferrodbc's own:
//! `adbc.ferrodbc.access_token` (an Entra access token, sent as Driver 18's
//! `SQL_COPT_SS_ACCESS_TOKEN` before connecting) and `adbc.ferrodbc.login_timeout` (seconds).
//! Secrets are never given back: reading `password` or the token is NOT_FOUND.

use crate::connection::FerrodbcConnection;
use crate::error::{Result, err, invalid_argument};
use adbc_core::error::Status;
use adbc_core::options::{OptionConnection, OptionDatabase, OptionValue};
use adbc_core::{Database, Optionable};

pub const ACCESS_TOKEN: &str = "adbc.ferrodbc.access_token";
pub const LOGIN_TIMEOUT: &str = "adbc.ferrodbc.login_timeout";
/// `SQL_COPT_SS_ACCESS_TOKEN` (msodbcsql.h).
const SQL_COPT_SS_ACCESS_TOKEN: i32 = 1256;

#[derive(Default, Clone)]
pub struct FerrodbcDatabase {
    uri: Option<String>,
    username: Option<String>,
    password: Option<String>,
    access_token: Option<String>,
    login_timeout: Option<u32>,
}

impl std::fmt::Debug for FerrodbcDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password, the token or the uri (which may hold a PWD).
        f.debug_struct("FerrodbcDatabase").finish_non_exhaustive()
    }
}

pub fn string_value(key: &str, value: OptionValue) -> Result<String> {
    match value {
        OptionValue::String(s) => Ok(s),
        OptionValue::Int(i) => Ok(i.to_string()),
        OptionValue::Double(d) => Ok(d.to_string()),
        OptionValue::Bytes(b) => String::from_utf8(b)
            .map_err(|_| invalid_argument(format!("option {key}: bytes that are not UTF-8"))),
        _ => Err(invalid_argument(format!(
            "option {key}: an unknown value kind"
        ))),
    }
}

pub fn int_value(key: &str, value: OptionValue) -> Result<i64> {
    match value {
        OptionValue::Int(i) => Ok(i),
        other => string_value(key, other)?
            .trim()
            .parse()
            .map_err(|_| invalid_argument(format!("option {key}: not an integer"))),
    }
}

pub fn unknown_option(key: &str) -> adbc_core::error::Error {
    err(
        Status::NotFound,
        format!("ferrodbc ADBC: unknown option {key:?}"),
    )
}

impl FerrodbcDatabase {
    /// The connection string and the attributes to set before connecting.
    fn connection_string(&self) -> Result<(String, Vec<(i32, ferrodbc::info::AttrValue)>)> {
        let uri = self.uri.as_deref().ok_or_else(|| {
            err(
                Status::InvalidState,
                "ferrodbc ADBC: the uri option is not set",
            )
        })?;
        let cs = crate::uri::to_connection_string(uri)?;
        let cs =
            crate::uri::with_credentials(&cs, self.username.as_deref(), self.password.as_deref());
        let mut attrs = Vec::new();
        if let Some(token) = &self.access_token {
            let data: Vec<u8> = token.encode_utf16().flat_map(u16::to_le_bytes).collect();
            let mut packed = (data.len() as u32).to_le_bytes().to_vec();
            packed.extend(data);
            attrs.push((
                SQL_COPT_SS_ACCESS_TOKEN,
                ferrodbc::info::AttrValue::Bytes(packed),
            ));
        }
        Ok((cs, attrs))
    }
}

impl Optionable for FerrodbcDatabase {
    type Option = OptionDatabase;

    fn set_option(&mut self, key: Self::Option, value: OptionValue) -> Result<()> {
        let name = key.as_ref().to_string();
        match key {
            OptionDatabase::Uri => self.uri = Some(string_value(&name, value)?),
            OptionDatabase::Username => self.username = Some(string_value(&name, value)?),
            OptionDatabase::Password => self.password = Some(string_value(&name, value)?),
            OptionDatabase::Other(k) if k == ACCESS_TOKEN => {
                self.access_token = Some(string_value(&name, value)?);
            }
            OptionDatabase::Other(k) if k == LOGIN_TIMEOUT => {
                let secs = int_value(&name, value)?;
                self.login_timeout = Some(u32::try_from(secs).map_err(|_| {
                    invalid_argument(format!("{LOGIN_TIMEOUT} must be 0..2^32 seconds"))
                })?);
            }
            _ => return Err(unknown_option(&name)),
        }
        Ok(())
    }

    fn get_option_string(&self, key: Self::Option) -> Result<String> {
        match &key {
            OptionDatabase::Uri if self.uri.as_deref().is_some_and(crate::uri::is_url) => {
                // The URL form may hold a password: given back without it.
                Err(unknown_option(
                    "uri (not given back: it may hold a password)",
                ))
            }
            OptionDatabase::Uri => self.uri.clone().ok_or_else(|| unknown_option("uri")),
            OptionDatabase::Username => self
                .username
                .clone()
                .ok_or_else(|| unknown_option("username")),
            OptionDatabase::Other(k) if k == LOGIN_TIMEOUT => self
                .login_timeout
                .map(|s| s.to_string())
                .ok_or_else(|| unknown_option(k)),
            _ => Err(unknown_option(key.as_ref())),
        }
    }

    fn get_option_bytes(&self, key: Self::Option) -> Result<Vec<u8>> {
        self.get_option_string(key).map(String::into_bytes)
    }

    fn get_option_int(&self, key: Self::Option) -> Result<i64> {
        match &key {
            OptionDatabase::Other(k) if k == LOGIN_TIMEOUT => self
                .login_timeout
                .map(i64::from)
                .ok_or_else(|| unknown_option(k)),
            _ => Err(unknown_option(key.as_ref())),
        }
    }

    fn get_option_double(&self, key: Self::Option) -> Result<f64> {
        Err(unknown_option(key.as_ref()))
    }
}

impl Database for FerrodbcDatabase {
    type ConnectionType = FerrodbcConnection;

    fn new_connection(&self) -> Result<Self::ConnectionType> {
        self.new_connection_with_opts(std::iter::empty())
    }

    fn new_connection_with_opts(
        &self,
        opts: impl IntoIterator<Item = (OptionConnection, OptionValue)>,
    ) -> Result<Self::ConnectionType> {
        let (cs, attrs) = self.connection_string()?;
        // ADBC's default is autocommit on.
        let conn = ferrodbc::Connection::connect_with_attrs(&cs, true, self.login_timeout, &attrs)
            .map_err(|e| crate::error::from_engine(&e))?;
        let mut conn = FerrodbcConnection::new(conn);
        for (k, v) in opts {
            conn.set_option(k, v)?;
        }
        Ok(conn)
    }
}
