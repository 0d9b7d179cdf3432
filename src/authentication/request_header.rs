//! upstream's request-header authenticator (`authentication/request/headerrequest`):
//! a front proxy whose client certificate is signed by the request-header
//! CA names the user it vouches for in request headers. Which headers is
//! the caller's choice (`--requestheader-*-headers`); kubeadm's choice, the
//! `X-Remote-*` family, is what kube-aggregator sends and what kapi uses
//! with its own generated front-proxy CA.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::UserInfo;

pub const REMOTE_USER_HEADER: &str = "X-Remote-User";
pub const REMOTE_GROUP_HEADER: &str = "X-Remote-Group";
pub const REMOTE_UID_HEADER: &str = "X-Remote-Uid";
pub const REMOTE_EXTRA_PREFIX: &str = "X-Remote-Extra-";

/// Which headers carry the user's name, uid, groups and extra values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeaderNames {
    pub username: Vec<String>,
    pub uid: Vec<String>,
    pub group: Vec<String>,
    pub extra_prefixes: Vec<String>,
}

impl HeaderNames {
    /// kubeadm's names, which kube-aggregator's proxy always sends.
    pub fn standard() -> &'static HeaderNames {
        static STANDARD: std::sync::LazyLock<HeaderNames> =
            std::sync::LazyLock::new(|| HeaderNames {
                username: vec![REMOTE_USER_HEADER.into()],
                uid: vec![REMOTE_UID_HEADER.into()],
                group: vec![REMOTE_GROUP_HEADER.into()],
                extra_prefixes: vec![REMOTE_EXTRA_PREFIX.into()],
            });
        &STANDARD
    }

    /// The user named in `headers`, read as upstream reads it: the first
    /// username header whose first value is non-empty (none: no user), the
    /// uid likewise, every non-empty value of every group header, and extra
    /// keys lower-cased, then percent-decoded.
    pub fn user(&self, headers: &http::HeaderMap) -> Option<UserInfo> {
        let first = |names: &[String]| {
            names.iter().find_map(|n| {
                headers
                    .get(n.as_str())
                    .and_then(|v| v.to_str().ok())
                    .filter(|v| !v.is_empty())
                    .map(str::to_string)
            })
        };
        let name = first(&self.username)?;
        let uid = first(&self.uid).unwrap_or_default();
        let groups = self
            .group
            .iter()
            .flat_map(|n| headers.get_all(n.as_str()))
            .filter_map(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .collect();
        let mut extra = BTreeMap::<String, Vec<String>>::new();
        // Prefixes first, so each key's values keep the prefixes' order.
        for prefix in &self.extra_prefixes {
            let prefix = prefix.to_ascii_lowercase();
            for (h, v) in headers {
                // http's header names are already lower case.
                if let (Some(key), Ok(v)) = (h.as_str().strip_prefix(&prefix), v.to_str()) {
                    extra
                        .entry(path_unescape(key))
                        .or_default()
                        .push(v.to_string());
                }
            }
        }
        Some(UserInfo {
            name,
            uid,
            groups,
            extra,
        })
    }

    /// Whether `name` is one of these headers (cleared once read, and from
    /// anything kapi forwards).
    pub fn is_auth_header(&self, name: &str) -> bool {
        let eq = |list: &[String]| list.iter().any(|h| h.eq_ignore_ascii_case(name));
        eq(&self.username)
            || eq(&self.uid)
            || eq(&self.group)
            || self.extra_prefixes.iter().any(|p| {
                name.len() >= p.len()
                    && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
            })
    }
}

/// Go's `url.PathUnescape`; a malformed key is kept as it came.
fn path_unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return s.to_string(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// The `--requestheader-*` flags, resolved: a caller's front-proxy CA, the
/// names its proxies may present, and the headers they speak in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub client_ca_file: PathBuf,
    /// Common names a front proxy may present; empty accepts any.
    pub allowed_names: Vec<String>,
    pub headers: HeaderNames,
}

/// Whom kapi trusts as a front proxy, resolved from [`Settings`] or from
/// kapi's own front-proxy CA; published in `extension-apiserver-authentication`.
#[derive(Debug, Clone)]
pub struct Trust {
    pub ca_pem: String,
    pub allowed_names: Vec<String>,
    pub headers: HeaderNames,
}

/// The `--requestheader-*` flags as given.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub client_ca_file: Option<PathBuf>,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_headers_prefix: Vec<String>,
}

/// A refused flag: its name and upstream's message.
pub type FlagError = (&'static str, String);

impl Flags {
    /// Validated as upstream's `RequestHeaderAuthenticationOptions`: a
    /// blank name is an error, leaving out a standard header is a warning
    /// (aggregated servers expect it), and without a CA file the other
    /// flags configure nothing. Returns the settings and the warnings.
    pub fn resolve(self) -> Result<(Option<Settings>, Vec<String>), FlagError> {
        for (flag, values) in [
            ("requestheader-username-headers", &self.username_headers),
            ("requestheader-group-headers", &self.group_headers),
            (
                "requestheader-extra-headers-prefix",
                &self.extra_headers_prefix,
            ),
            ("requestheader-allowed-names", &self.allowed_names),
        ] {
            if values.iter().any(|v| v.trim().is_empty()) {
                return Err((
                    flag,
                    format!("empty value in {}", crate::api::go_quote(flag)),
                ));
            }
        }
        let mut warnings = Vec::new();
        for (flag, values, standard, what) in [
            (
                "requestheader-username-headers",
                &self.username_headers,
                REMOTE_USER_HEADER,
                "header",
            ),
            (
                "requestheader-group-headers",
                &self.group_headers,
                REMOTE_GROUP_HEADER,
                "header",
            ),
            (
                "requestheader-extra-headers-prefix",
                &self.extra_headers_prefix,
                REMOTE_EXTRA_PREFIX,
                "header prefix",
            ),
        ] {
            if !values.is_empty() && !values.iter().any(|v| v.eq_ignore_ascii_case(standard)) {
                warnings.push(format!(
                    "--{flag} is set without specifying the standard {standard} {what} - API aggregation will not work"
                ));
            }
        }
        let settings = self.client_ca_file.map(|client_ca_file| Settings {
            client_ca_file,
            allowed_names: self.allowed_names,
            headers: HeaderNames {
                username: self.username_headers,
                uid: self.uid_headers,
                group: self.group_headers,
                extra_prefixes: self.extra_headers_prefix,
            },
        });
        Ok((settings, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                http::HeaderValue::from_str(v).expect("value"),
            );
        }
        h
    }

    #[test]
    fn reads_the_user_as_upstream_does() {
        let names = HeaderNames {
            username: vec!["X-User".into(), "X-Other-User".into()],
            uid: vec!["X-Uid".into()],
            group: vec!["X-Group".into(), "X-Team".into()],
            extra_prefixes: vec!["X-Extra-".into(), "X-More-".into()],
        };
        let h = headers(&[
            ("x-user", ""),
            ("x-other-user", "alice"),
            ("x-uid", "42"),
            ("x-group", "a"),
            ("x-group", ""),
            ("x-team", "b"),
            ("x-extra-scopes%2Fx", "1"),
            ("x-more-scopes%2Fx", "2"),
            ("x-extra-bad%zz", "3"),
        ]);
        let user = names.user(&h).expect("a user");
        assert_eq!(user.name, "alice");
        assert_eq!(user.uid, "42");
        assert_eq!(user.groups, ["a", "b"]);
        assert_eq!(user.extra["scopes/x"], ["1", "2"]);
        assert_eq!(user.extra["bad%zz"], ["3"]);
        assert!(names.is_auth_header("X-EXTRA-anything"));
        assert!(names.is_auth_header("x-team"));
        assert!(!names.is_auth_header("x-remote-user"));
    }

    #[test]
    fn no_username_header_no_user() {
        let h = headers(&[("x-remote-group", "g")]);
        assert_eq!(HeaderNames::standard().user(&h), None);
        assert_eq!(
            HeaderNames::default().user(&headers(&[("x-remote-user", "a")])),
            None
        );
    }

    #[test]
    fn flags_validate_as_upstream() {
        let blank = Flags {
            group_headers: vec![" ".into()],
            ..Flags::default()
        };
        assert_eq!(
            blank.resolve().unwrap_err().1,
            "empty value in \"requestheader-group-headers\""
        );
        let (settings, warnings) = Flags {
            username_headers: vec!["X-User".into()],
            ..Flags::default()
        }
        .resolve()
        .expect("valid");
        assert_eq!(settings, None, "without a CA the flags configure nothing");
        assert_eq!(
            warnings,
            ["--requestheader-username-headers is set without specifying the standard X-Remote-User header - API aggregation will not work"]
        );
    }
}
