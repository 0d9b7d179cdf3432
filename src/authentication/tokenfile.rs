//! `--token-auth-file`: CSV lines `token,user,uid[,"group1,group2"]`.

use std::collections::HashMap;
use std::path::Path;

use super::UserInfo;

#[derive(Debug, Default)]
pub struct TokenFile {
    users: HashMap<String, UserInfo>,
}

impl TokenFile {
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let mut users = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields = split_csv(line);
            if fields.len() < 3 {
                return Err(format!("line {}: want at least token,user,uid", n + 1));
            }
            if fields[0].is_empty() || fields[1].is_empty() {
                return Err(format!("line {}: token and user must not be empty", n + 1));
            }
            let groups = fields
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            users.insert(
                fields[0].clone(),
                UserInfo {
                    name: fields[1].clone(),
                    uid: fields[2].clone(),
                    groups,
                    ..Default::default()
                },
            );
        }
        Ok(TokenFile { users })
    }

    pub fn lookup(&self, token: &str) -> Option<&UserInfo> {
        self.users.get(token)
    }
}

/// Splits one CSV line, honouring double quotes (the groups column is quoted).
fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quoted_groups() {
        let f = TokenFile::parse("# c\nabc,alice,1,\"dev,ops\"\nxyz,bob,2\n").expect("parse");
        let a = f.lookup("abc").expect("alice");
        assert_eq!(a.name, "alice");
        assert_eq!(a.groups, vec!["dev", "ops"]);
        assert!(f.lookup("xyz").expect("bob").groups.is_empty());
        assert!(f.lookup("nope").is_none());
        assert!(TokenFile::parse("onlytoken\n").is_err());
    }
}
