//! Federated authentication: a Microsoft Entra ID access token in LOGIN7's FEDAUTH feature
//! extension (MS-TDS 2.2.6.4, FeatureId 0x02, bFedAuthLibrary SECURITYTOKEN), which is what
//! ODBC Driver 18 sends for `SQL_COPT_SS_ACCESS_TOKEN` (1256).
//!
//! Azure SQL validates the token with Entra ID's keys; the peer checks a token signed with a
//! test key given on its command line (`--fedauth-key HEX`, HS256), so tests can make valid,
//! expired, badly signed, unsigned and wrong-audience tokens. It checks what Azure SQL refuses a
//! login for: the signature, `exp` (and `nbf`) and the audience `https://database.windows.net/`
//! (the resource of the `https://database.windows.net/.default` scope). The login name
//! (SUSER_SNAME(), ORIGINAL_LOGIN(), SYSTEM_USER) is the token's identity.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use ring::hmac;

/// LOGIN7 FeatureExt id of FEDAUTH.
pub const FEATURE_FEDAUTH: u8 = 0x02;
/// bFedAuthLibrary: the client brings its own token (ADAL/MSAL workflows are 0x02).
const LIBRARY_SECURITY_TOKEN: u8 = 0x01;
/// The audience of access tokens for Azure SQL (scope `https://database.windows.net/.default`).
pub const AZURE_SQL_AUDIENCE: &str = "https://database.windows.net/";
/// The user name Azure SQL puts in its 18456 messages for a token login.
const TOKEN_PRINCIPAL: &str = "<token-identified principal>";

/// The key tokens must be signed with (HMAC-SHA256, JWT `alg` HS256).
pub struct Verifier {
    key: hmac::Key,
}

/// Why a token login is refused, with the text Azure SQL gives (seen in client reports:
/// "Login failed for user '<token-identified principal>'. Token is expired." and "...
/// Incorrect or invalid token."). A token for another resource gets the latter here.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    Expired,
    Invalid,
}

impl Refusal {
    pub fn message(&self) -> String {
        match self {
            Refusal::Expired => {
                format!("Login failed for user '{TOKEN_PRINCIPAL}'. Token is expired.")
            }
            Refusal::Invalid => {
                format!("Login failed for user '{TOKEN_PRINCIPAL}'. Incorrect or invalid token.")
            }
        }
    }
}

/// The FEDAUTH feature data of a LOGIN7: options byte (fFedAuthEcho in bit 0, bFedAuthLibrary
/// in bits 1-7), then for SECURITYTOKEN a DWORD length, the token (UTF-16LE) and an optional
/// 32-byte nonce.
#[derive(Debug)]
pub struct Request {
    pub echo: bool,
    pub library: u8,
    pub token: String,
    pub nonce: Option<Vec<u8>>,
}

pub fn parse_feature(data: &[u8]) -> Result<Request, Refusal> {
    let options = *data.first().ok_or(Refusal::Invalid)?;
    let library = options >> 1;
    let mut req = Request {
        echo: options & 1 != 0,
        library,
        token: String::new(),
        nonce: None,
    };
    if library != LIBRARY_SECURITY_TOKEN {
        return Ok(req);
    }
    let len = data
        .get(1..5)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or(Refusal::Invalid)?;
    let token = data.get(5..5 + len).ok_or(Refusal::Invalid)?;
    if !len.is_multiple_of(2) {
        return Err(Refusal::Invalid);
    }
    req.token = crate::conv::from_utf16(token);
    req.nonce = data.get(5 + len..5 + len + 32).map(<[u8]>::to_vec);
    Ok(req)
}

/// For `--verbose`: what the FEDAUTH feature carried (never the token itself).
pub fn describe(feature: &[u8]) -> String {
    match parse_feature(feature) {
        Ok(r) => format!(
            " fedauth(library={}, echo={}, token={} chars, nonce={})",
            r.library,
            r.echo,
            r.token.len(),
            r.nonce.is_some()
        ),
        Err(_) => " fedauth(malformed)".into(),
    }
}

/// The FEATUREEXTACK data for FEDAUTH: the client's nonce echoed, or nothing.
pub fn ack_data(req: &Request) -> Vec<u8> {
    req.nonce.clone().unwrap_or_default()
}

impl Verifier {
    /// `--fedauth-key HEX`: the HS256 key as hexadecimal bytes.
    pub fn from_hex(hex: &str) -> Result<Verifier, String> {
        let hex = hex.trim();
        if hex.is_empty() || !hex.len().is_multiple_of(2) {
            return Err("--fedauth-key: an even number of hexadecimal digits".into());
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|e| format!("--fedauth-key: {e}"))?;
        Ok(Verifier {
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes),
        })
    }

    /// Check `token` (a JWT) at time `now` (seconds since the epoch): the login name it names,
    /// or why it is refused.
    pub fn verify(&self, token: &str, now: i64) -> Result<String, Refusal> {
        let mut parts = token.split('.');
        let (Some(head), Some(body), Some(sig), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Refusal::Invalid);
        };
        let header = json_part(head)?;
        // An unsigned token (`alg: none`) or another algorithm is not one this server accepts.
        if header.get("alg").and_then(|a| a.as_str()) != Some("HS256") {
            return Err(Refusal::Invalid);
        }
        let sig = b64url(sig)?;
        let signed = &token[..head.len() + 1 + body.len()];
        hmac::verify(&self.key, signed.as_bytes(), &sig).map_err(|_| Refusal::Invalid)?;
        let claims = json_part(body)?;
        let audience_ok = match claims.get("aud") {
            Some(serde_json::Value::String(a)) => a == AZURE_SQL_AUDIENCE,
            Some(serde_json::Value::Array(a)) => a.iter().any(|a| a == AZURE_SQL_AUDIENCE),
            _ => false,
        };
        if !audience_ok {
            return Err(Refusal::Invalid);
        }
        let exp = claims.get("exp").and_then(|e| e.as_i64());
        match exp {
            Some(exp) if exp <= now => return Err(Refusal::Expired),
            None => return Err(Refusal::Invalid),
            Some(_) => {}
        }
        if claims
            .get("nbf")
            .and_then(|n| n.as_i64())
            .is_some_and(|nbf| nbf > now)
        {
            return Err(Refusal::Invalid);
        }
        login_name(&claims).ok_or(Refusal::Invalid)
    }
}

/// The name Azure SQL shows for a token login: a user's UPN (`upn`, else `unique_name`), an
/// application's (service principal, managed identity) `appid@tid`, else the object id.
fn login_name(claims: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let s = |k: &str| {
        claims
            .get(k)
            .and_then(|v| v.as_str())
            .filter(|v| !v.is_empty())
    };
    if let Some(n) = s("upn").or_else(|| s("unique_name")) {
        return Some(n.to_string());
    }
    if let (Some(app), Some(tid)) = (s("appid").or_else(|| s("azp")), s("tid")) {
        return Some(format!("{app}@{tid}"));
    }
    s("oid").map(str::to_string)
}

fn b64url(part: &str) -> Result<Vec<u8>, Refusal> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .map_err(|_| Refusal::Invalid)
}

fn json_part(part: &str) -> Result<serde_json::Map<String, serde_json::Value>, Refusal> {
    match serde_json::from_slice(&b64url(part)?) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        _ => Err(Refusal::Invalid),
    }
}

/// Seconds since the epoch, now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The outcome of a LOGIN7 that carried FEDAUTH: the login name and the FEATUREEXTACK data,
/// or the refusal (also when the peer has no key: it accepts no token then).
pub fn login(verifier: Option<&Verifier>, feature: &[u8]) -> Result<(String, Vec<u8>), Refusal> {
    let req = parse_feature(feature)?;
    if req.library != LIBRARY_SECURITY_TOKEN {
        // ADAL/MSAL workflows need FEDAUTHINFO round trips the peer does not serve.
        return Err(Refusal::Invalid);
    }
    let name = verifier
        .ok_or(Refusal::Invalid)?
        .verify(&req.token, now())?;
    Ok((name, ack_data(&req)))
}

/// Make `SUSER_SNAME()`, `SUSER_NAME()`, `ORIGINAL_LOGIN()` and `SYSTEM_USER` (rewritten to
/// `__login_name()`) answer `name` on this session's SQLite connection.
pub fn set_login_name(db: &rusqlite::Connection, name: &str) -> rusqlite::Result<()> {
    let name = name.to_string();
    db.create_scalar_function(
        "__login_name",
        0,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8,
        move |_| Ok(name.clone()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn b64(v: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v)
    }

    fn jwt(key: &[u8], alg: &str, claims: &str) -> String {
        let head = b64(format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#).as_bytes());
        let body = b64(claims.as_bytes());
        let k = hmac::Key::new(hmac::HMAC_SHA256, key);
        let sig = hmac::sign(&k, format!("{head}.{body}").as_bytes());
        format!("{head}.{body}.{}", b64(sig.as_ref()))
    }

    #[test]
    fn verifies_and_refuses() {
        let v = Verifier::from_hex("00112233").unwrap();
        let key = [0x00, 0x11, 0x22, 0x33];
        let good = r#"{"aud":"https://database.windows.net/","exp":2000,"upn":"ana@contoso.com","tid":"t","oid":"o"}"#;
        assert_eq!(
            v.verify(&jwt(&key, "HS256", good), 1000),
            Ok("ana@contoso.com".into())
        );
        assert_eq!(
            v.verify(&jwt(&key, "HS256", good), 2000),
            Err(Refusal::Expired)
        );
        assert_eq!(
            v.verify(&jwt(&[9], "HS256", good), 1000),
            Err(Refusal::Invalid)
        );
        let unsigned = jwt(&key, "none", good);
        assert_eq!(v.verify(&unsigned, 1000), Err(Refusal::Invalid));
        let other = good.replace("database.windows.net/", "management.azure.com/");
        assert_eq!(
            v.verify(&jwt(&key, "HS256", &other), 1000),
            Err(Refusal::Invalid)
        );
        let app = r#"{"aud":"https://database.windows.net/","exp":2000,"appid":"a1","tid":"t1"}"#;
        assert_eq!(v.verify(&jwt(&key, "HS256", app), 1000), Ok("a1@t1".into()));
        assert_eq!(v.verify("not.a.jwt", 1000), Err(Refusal::Invalid));
    }

    #[test]
    fn parses_the_feature() {
        let token: Vec<u8> = "abc".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let mut data = vec![(LIBRARY_SECURITY_TOKEN << 1) | 1];
        data.extend_from_slice(&u32::try_from(token.len()).unwrap().to_le_bytes());
        data.extend_from_slice(&token);
        let r = parse_feature(&data).unwrap();
        assert!(r.echo && r.library == 1 && r.token == "abc" && r.nonce.is_none());
        assert!(parse_feature(&data[..4]).is_err());
    }
}
