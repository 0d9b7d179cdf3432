//! Go's duration syntax (`60s`, `1m30s`, `500ms`, `2h`), which every
//! kube-apiserver duration flag takes.

use std::time::Duration;

pub fn parse(input: &str) -> Result<Duration, String> {
    let s = input.trim();
    if s.is_empty() {
        return Err("empty duration".into());
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("missing unit in duration {input:?}"))?;
        if num_len == 0 {
            return Err(format!("invalid duration {input:?}"));
        }
        let value: f64 = rest[..num_len]
            .parse()
            .map_err(|_| format!("invalid duration {input:?}"))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            other => return Err(format!("unknown unit {other:?} in duration {input:?}")),
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    Ok(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert!(parse("10").is_err());
        assert!(parse("abc").is_err());
        assert!(parse("5x").is_err());
    }
}
