//! CEL for admission: the expressions of ValidatingAdmissionPolicies
//! (validations, messageExpressions, variables, matchConditions) and of
//! webhook matchConditions, evaluated over untyped JSON data (`object`,
//! `oldObject`, `request`, `params`, `namespaceObject`) with the same
//! environment as CRD rules. Errors read as upstream's CEL filter reports
//! them: `expression '<expr>' resulted in error: <why>`, or `compilation
//! error: <cel-go's rendering>` for an expression that does not parse.
//!
//! There is no type checking against the kinds' schemas (upstream checks
//! when a policy is written); mistakes surface when the expression runs.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::objects::{Key, Map as CelMap};
use kube_cel::cel::Value as Cel;
use serde_json::Value;

use super::env;
use super::value::dynamic;

/// What an expression evaluated to, as far as admission cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Bool(bool),
    String(String),
    Null,
    /// Any other value; the name of its type.
    Other(String),
}

/// The variables an admission expression sees, and the composited
/// `variables.<name>` of a policy (evaluated in order, each seeing the
/// earlier ones).
pub struct Activation {
    vars: Vec<(&'static str, Cel)>,
    variables: HashMap<Key, Cel>,
    variable_errors: Vec<(String, String)>,
    budget: u64,
}

impl Activation {
    /// Binds each name to its JSON value (`None` binds `null`).
    pub fn new(bindings: &[(&'static str, Option<&Value>)]) -> Activation {
        Activation {
            vars: bindings
                .iter()
                .map(|(n, v)| (*n, v.map(dynamic).unwrap_or(Cel::Null)))
                .collect(),
            variables: HashMap::new(),
            variable_errors: Vec::new(),
            budget: env::RUNTIME_BUDGET,
        }
    }

    /// Evaluates `expression` and makes it `variables.<name>` for what follows.
    pub fn define_variable(&mut self, name: &str, expression: &str) {
        match self.eval_cel(expression) {
            Ok(v) => {
                self.variables.insert(Key::from(name.to_string()), v);
            }
            Err(e) => self.variable_errors.push((name.to_string(), e)),
        }
    }

    /// Evaluates an expression; the error is upstream's message for it.
    pub fn eval(&mut self, expression: &str) -> Result<Outcome, String> {
        Ok(match self.eval_cel(expression)? {
            Cel::Bool(b) => Outcome::Bool(b),
            Cel::String(s) => Outcome::String(s.to_string()),
            Cel::Null => Outcome::Null,
            other => Outcome::Other(type_name(&other).to_string()),
        })
    }

    fn eval_cel(&mut self, expression: &str) -> Result<Cel, String> {
        let parsed = env::parse(expression);
        let p = match parsed.as_ref() {
            Ok(p) => p,
            Err(e) => return Err(format!("compilation error: {e}")),
        };
        // A variable that failed fails every expression using it.
        for (name, err) in &self.variable_errors {
            if expression.contains(&format!("variables.{name}")) {
                return Err(err.clone());
            }
        }
        let mut vars = self.vars.clone();
        vars.push((
            "variables",
            Cel::Map(CelMap {
                map: Arc::new(self.variables.clone()),
            }),
        ));
        env::eval(p, &vars, &mut self.budget).map_err(|e| {
            let (_, why) = env::runtime_error(&e);
            format!("expression '{expression}' resulted in error: {why}")
        })
    }
}

fn type_name(v: &Cel) -> &'static str {
    match v {
        Cel::List(_) => "list",
        Cel::Map(_) => "map",
        Cel::Int(_) => "int",
        Cel::UInt(_) => "uint",
        Cel::Float(_) => "double",
        Cel::Bytes(_) => "bytes",
        Cel::Duration(_) => "google.protobuf.Duration",
        Cel::Timestamp(_) => "google.protobuf.Timestamp",
        _ => "dyn",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expressions_over_json() {
        let obj = json!({"spec": {"replicas": 6}, "metadata": {"name": "d"}});
        let params = json!({"data": {"max": "5"}});
        let mut a = Activation::new(&[("object", Some(&obj)), ("params", Some(&params))]);
        assert_eq!(
            a.eval("object.spec.replicas <= 5"),
            Ok(Outcome::Bool(false))
        );
        assert_eq!(
            a.eval("object.spec.replicas <= int(params.data.max)"),
            Ok(Outcome::Bool(false))
        );
        a.define_variable("name", "object.metadata.name + '-x'");
        assert_eq!(a.eval("variables.name"), Ok(Outcome::String("d-x".into())));
        let err = a.eval("object.spec.missing > 1").unwrap_err();
        assert!(
            err.starts_with("expression 'object.spec.missing > 1' resulted in error: "),
            "{err}"
        );
        assert!(a
            .eval("object.(")
            .unwrap_err()
            .starts_with("compilation error: "));
        a.define_variable("bad", "object.nope.x");
        assert!(a.eval("variables.bad == 1").is_err());
    }
}
