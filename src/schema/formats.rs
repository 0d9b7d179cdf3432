//! The string formats CRD schemas validate (apiextensions-apiserver's
//! `supportedVersionedFormats` at 1.34, checked as kube-openapi's strfmt
//! registry does). Other formats (int32, int64, float, double, ...) are
//! stripped before validation and never checked.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use regex::Regex;

use crate::api::validation;

/// The normalised names (dashes removed, as go-openapi does) CRDs support.
const SUPPORTED: [&str; 26] = [
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    // 1.34
    "k8sshortname",
    "k8slongname",
];

fn normalize(format: &str) -> String {
    format.replace('-', "")
}

/// Whether the format is validated for CRDs (after upstream's
/// StripUnsupportedFormatsPostProcess).
pub(super) fn supported(format: &str) -> bool {
    !format.is_empty() && SUPPORTED.contains(&normalize(format).as_str())
}

/// A compiled regular expression, cached. Errors are Go-style messages.
pub(super) fn regex(pattern: &str) -> Result<Arc<Regex>, String> {
    type Cache = Mutex<HashMap<String, Result<Arc<Regex>, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock();
    if let Some(r) = map.get(pattern) {
        return r.clone();
    }
    let r = Regex::new(pattern)
        .map(Arc::new)
        .map_err(|e| go_regexp_error(pattern, &e));
    if map.len() > 4096 {
        map.clear();
    }
    map.insert(pattern.to_string(), r.clone());
    r
}

/// Go's `regexp.Compile` error for a pattern the regex crate rejects, as
/// close as the two parsers allow.
fn go_regexp_error(pattern: &str, e: &regex::Error) -> String {
    let text = e.to_string();
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .trim_start_matches("error: ")
        .to_string();
    let (code, expr) = if last.contains("unclosed group") {
        ("missing closing )", pattern.to_string())
    } else if last.contains("unopened group") {
        ("unexpected )", pattern.to_string())
    } else if last.contains("unclosed character class") {
        let from = pattern.rfind('[').unwrap_or(0);
        ("missing closing ]", pattern[from..].to_string())
    } else if last.contains("repetition operator missing expression") {
        let op = pattern
            .chars()
            .find(|c| matches!(c, '*' | '+' | '?' | '{'))
            .map(String::from)
            .unwrap_or_default();
        ("missing argument to repetition operator", op)
    } else if last.contains("escape") {
        let esc = pattern
            .find('\\')
            .map(|i| pattern[i..].chars().take(2).collect::<String>())
            .unwrap_or_default();
        ("invalid escape sequence", esc)
    } else if last.contains("class range") {
        ("invalid character class range", pattern.to_string())
    } else if last.contains("repetition") || last.contains("decimal") {
        ("invalid repeat count", pattern.to_string())
    } else if last.contains("exceeds size limit") {
        ("expression too large", pattern.to_string())
    } else {
        ("invalid or unsupported Perl syntax", pattern.to_string())
    };
    format!("error parsing regexp: {code}: `{expr}`")
}

fn matches(pattern: &str, s: &str) -> bool {
    regex(pattern).map(|r| r.is_match(s)).unwrap_or(false)
}

/// Whether `s` is valid for the (supported) format.
pub(super) fn check(format: &str, s: &str) -> bool {
    match normalize(format).as_str() {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(s),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => s.parse::<IpAddr>().is_ok() && s.contains('.'),
        "ipv6" => s.parse::<IpAddr>().is_ok() && s.contains(':'),
        "cidr" => s.parse::<ipnet::IpNet>().is_ok(),
        "mac" => is_mac(s),
        "uuid" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid3" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid4" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid5" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "isbn" => is_isbn10(s) || is_isbn13(s),
        "isbn10" => is_isbn10(s),
        "isbn13" => is_isbn13(s),
        "creditcard" => is_credit_card(s),
        "ssn" => s.len() == 11 && matches(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$", s),
        "hexcolor" => matches(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", s),
        "rgbcolor" => matches(
            r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
            s,
        ),
        "byte" => matches(
            r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
            s,
        ),
        "password" => true,
        "date" => is_date(s),
        "datetime" => is_date_time(s),
        "duration" => is_duration(s),
        "k8sshortname" => validation::dns1123_label(s).is_empty(),
        "k8slongname" => validation::dns1123_subdomain(s).is_empty(),
        _ => true,
    }
}

/// strfmt's IsHostname.
fn is_hostname(s: &str) -> bool {
    const HOSTNAME: &str = r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$";
    matches(HOSTNAME, s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// Go's net/url.ParseRequestURI accepting it (approximately: an absolute
/// URI or an absolute path, no control characters, sane escapes and host).
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| (c as u32) < 0x20 || c as u32 == 0x7f) {
        return false;
    }
    let before_query = s.split('?').next().unwrap_or("");
    let bytes = before_query.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return false;
        }
    }
    // scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
    let mut scheme_end = None;
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' => {
                if i == 0 {
                    return false;
                }
                scheme_end = Some(i);
                break;
            }
            _ => break,
        }
    }
    let Some(end) = scheme_end else {
        return s.starts_with('/');
    };
    let rest = &s[end + 1..];
    if let Some(auth) = rest.strip_prefix("//") {
        let authority = auth.split(['/', '?']).next().unwrap_or("");
        let host = authority.rsplit('@').next().unwrap_or("");
        if host
            .chars()
            .any(|c| c.is_whitespace() || "<>\"{}|\\^`".contains(c))
        {
            return false;
        }
        if !host.starts_with('[') {
            if let Some((_, port)) = host.rsplit_once(':') {
                if !port.bytes().all(|b| b.is_ascii_digit()) {
                    return false;
                }
            }
        }
    }
    true
}

/// net/mail.ParseAddress accepting a single address (approximately).
fn is_email(s: &str) -> bool {
    let s = s.trim();
    let addr = match (s.rfind('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        (None, false) => s,
        _ => return false,
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return false;
    };
    const ATOM: &str = r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\x{80}-\x{10FFFF}]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\x{80}-\x{10FFFF}]+)*$";
    let local_ok = matches(ATOM, local) || matches(r#"^"([^"\\]|\\.)*"$"#, local);
    let domain_ok = matches(ATOM, domain) || matches(r"^\[[^\[\]\\]*\]$", domain);
    local_ok && domain_ok
}

/// net.ParseMAC.
fn is_mac(s: &str) -> bool {
    let valid_len = |n: usize| n == 6 || n == 8 || n == 20;
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    if s.contains(':') || s.contains('-') {
        let sep = if s.contains(':') { ':' } else { '-' };
        let parts: Vec<&str> = s.split(sep).collect();
        valid_len(parts.len()) && parts.iter().all(|p| hex(p, 2))
    } else if s.contains('.') {
        let parts: Vec<&str> = s.split('.').collect();
        valid_len(parts.len() * 2) && parts.iter().all(|p| hex(p, 4))
    } else {
        false
    }
}

fn sanitize_isbn(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let s = sanitize_isbn(s);
    if !matches(r"^(?:[0-9]{9}X|[0-9]{10})$", &s) {
        return false;
    }
    let b = s.as_bytes();
    let mut sum: u32 = (0..9)
        .map(|i| (i as u32 + 1) * u32::from(b[i] - b'0'))
        .sum();
    sum += 10
        * if b[9] == b'X' {
            10
        } else {
            u32::from(b[9] - b'0')
        };
    sum % 11 == 0
}

fn is_isbn13(s: &str) -> bool {
    let s = sanitize_isbn(s);
    if !matches(r"^[0-9]{13}$", &s) {
        return false;
    }
    let b = s.as_bytes();
    let sum: u32 = (0..12)
        .map(|i| if i % 2 == 0 { 1 } else { 3 } * u32::from(b[i] - b'0'))
        .sum();
    u32::from(b[12] - b'0') == (10 - sum % 10) % 10
}

fn is_credit_card(s: &str) -> bool {
    let s: String = s.chars().filter(char::is_ascii_digit).collect();
    if !matches(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$",
        &s,
    ) {
        return false;
    }
    // Luhn
    let mut sum = 0;
    let mut double = false;
    for b in s.bytes().rev() {
        let mut d = u32::from(b - b'0');
        if double {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
        double = !double;
    }
    sum % 10 == 0
}

/// RFC 3339 full-date, as time.Parse("2006-01-02") takes it.
fn is_date(s: &str) -> bool {
    s.len() == 10
        && matches(r"^\d{4}-\d{2}-\d{2}$", s)
        && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// strfmt's IsDateTime: a date, "t" (any case), and a time with zone.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Ok(re) = regex(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
    else {
        return false;
    };
    let Some(c) = re.captures(parts[1]) else {
        return false;
    };
    let part = |i: usize| c.get(i).map(|m| m.as_str()).unwrap_or("");
    part(1) <= "23" && part(2) <= "59" && part(3) <= "59"
}

/// Go's time.ParseDuration, or strfmt's "<n> <unit>" forms.
fn is_duration(s: &str) -> bool {
    go_parse_duration(s) || strfmt_duration(s)
}

fn go_parse_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let mut i = int_len;
        let mut frac_len = 0;
        if rest[i..].starts_with('.') {
            i += 1;
            frac_len = rest[i..].bytes().take_while(u8::is_ascii_digit).count();
            i += frac_len;
        }
        if int_len == 0 && frac_len == 0 {
            return false;
        }
        rest = &rest[i..];
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map(|(j, _)| j)
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&unit) {
            return false;
        }
        rest = &rest[unit_len..];
    }
    true
}

fn strfmt_duration(s: &str) -> bool {
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let Ok(re) = regex(r"((\d+)\s*([A-Za-zµ]+))") else {
        return false;
    };
    let mut ok = false;
    for c in re.captures_iter(s) {
        let unit = c
            .get(3)
            .map(|m| m.as_str().trim().to_lowercase())
            .unwrap_or_default();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit.eq_ignore_ascii_case(v) {
                    ok = true;
                }
            }
        }
    }
    ok
}
