//! pflag's syntax and errors, refusals, flags reaching the serve options,
//! and every flag classified once.

use std::path::Path;

use super::super::ServeOptions;
use super::flags::{lookup, HONOURED};

use super::*;

fn parse(args: &[&str]) -> Result<CommandLine, ParseError> {
    CommandLine::parse(args.iter().map(|s| s.to_string()))
}

#[test]
fn pflag_syntax() {
    let cl = parse(&[
        "--secure-port=7443",
        "--etcd-servers",
        "http://a:2379,http://b:2379",
        "--allow-privileged",
        "--anonymous-auth=false",
        "-v=4",
        "--service-account-key-file=a.pub",
        "--service-account-key-file",
        "b.pub",
        "--etcd_prefix=/x",
    ])
    .expect("parses");
    assert_eq!(cl.get("secure-port"), Some("7443"));
    assert_eq!(cl.list("etcd-servers"), ["http://a:2379", "http://b:2379"]);
    assert_eq!(cl.bool("allow-privileged"), Some(true));
    assert_eq!(cl.bool("anonymous-auth"), Some(false));
    assert_eq!(cl.get("v"), Some("4"));
    assert_eq!(cl.list("service-account-key-file"), ["a.pub", "b.pub"]);
    assert_eq!(cl.get("etcd-prefix"), Some("/x"));
    assert_eq!(parse(&["-v", "2"]).expect("-v 2").get("v"), Some("2"));
    assert_eq!(parse(&["-v3"]).expect("-v3").get("v"), Some("3"));
}

#[test]
fn pflag_errors() {
    assert_eq!(
        parse(&["--no-such-flag"]).unwrap_err().to_string(),
        "unknown flag: --no-such-flag"
    );
    assert_eq!(
        parse(&["-x"]).unwrap_err().to_string(),
        "unknown shorthand flag: 'x' in -x"
    );
    assert_eq!(
        parse(&["--etcd-servers"]).unwrap_err().to_string(),
        "flag needs an argument: --etcd-servers"
    );
    assert_eq!(
        parse(&["--secure-port=abc"]).unwrap_err().to_string(),
        "invalid argument \"abc\" for \"--secure-port\" flag: strconv.ParseInt: parsing \"abc\": invalid syntax"
    );
    assert_eq!(
        parse(&["serve"]).unwrap_err().to_string(),
        "\"kube-apiserver\" does not take any arguments, got [\"serve\"]"
    );
}

#[test]
fn settings_kapi_lacks_are_refused_unless_at_their_default() {
    let defaults = ServeOptions::defaults();
    let ok = parse(&["--etcd-servers=http://127.0.0.1:2379", "--runtime-config="]).expect("parses");
    assert!(Personality::from_command_line(&ok, defaults.clone()).is_ok());
    let refused = parse(&[
        "--etcd-servers=http://127.0.0.1:2379",
        "--authentication-config=authn.yaml",
    ])
    .expect("parses");
    let e = Personality::from_command_line(&refused, defaults.clone()).unwrap_err();
    assert!(e.0.contains("--authentication-config"), "{e}");
    let no_etcd = parse(&["--secure-port=1"]).expect("parses");
    let e = Personality::from_command_line(&no_etcd, defaults).unwrap_err();
    assert_eq!(e.0, "[--etcd-servers must be specified]");
}

#[test]
fn kubeadms_front_proxy_flags_reach_serve_options() {
    let cl = parse(&[
        "--etcd-servers=http://127.0.0.1:2379",
        "--requestheader-client-ca-file=/pki/front-proxy-ca.crt",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-uid-headers=X-Remote-Uid",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--proxy-client-cert-file=/pki/front-proxy-client.crt",
        "--proxy-client-key-file=/pki/front-proxy-client.key",
    ])
    .expect("parses");
    let o = Personality::from_command_line(&cl, ServeOptions::defaults())
        .expect("ok")
        .serve;
    assert_eq!(
        o.requestheader_client_ca_file.as_deref(),
        Some(Path::new("/pki/front-proxy-ca.crt"))
    );
    assert_eq!(o.requestheader_allowed_names, ["front-proxy-client"]);
    assert_eq!(o.requestheader_username_headers, ["X-Remote-User"]);
    assert_eq!(o.requestheader_uid_headers, ["X-Remote-Uid"]);
    assert_eq!(o.requestheader_group_headers, ["X-Remote-Group"]);
    assert_eq!(o.requestheader_extra_headers_prefix, ["X-Remote-Extra-"]);
    assert_eq!(
        o.proxy_client_key_file.as_deref(),
        Some(Path::new("/pki/front-proxy-client.key"))
    );
    let half = parse(&[
        "--etcd-servers=http://127.0.0.1:2379",
        "--proxy-client-cert-file=/pki/front-proxy-client.crt",
    ])
    .expect("parses");
    assert!(Personality::from_command_line(&half, ServeOptions::defaults()).is_err());
}

#[test]
fn http2_streams_default_to_kube_apiservers_hundred() {
    let cl = parse(&["--etcd-servers=http://127.0.0.1:2379"]).expect("parses");
    let p = Personality::from_command_line(&cl, ServeOptions::defaults()).expect("ok");
    assert_eq!(p.serve.http2_max_streams_per_connection, 0);
    let completed = p.serve.complete().expect("completes");
    assert_eq!(completed.http2_max_streams_per_connection, 100);
    let cl = parse(&[
        "--etcd-servers=http://127.0.0.1:2379",
        "--http2-max-streams-per-connection=250",
    ])
    .expect("parses");
    let p = Personality::from_command_line(&cl, ServeOptions::defaults()).expect("ok");
    assert_eq!(p.serve.http2_max_streams_per_connection, 250);
}

#[test]
fn every_flag_is_classified_once() {
    for (name, _) in NO_OPS {
        assert!(
            lookup(name).is_some(),
            "{name} is not a kube-apiserver flag"
        );
        assert!(
            !HONOURED.contains(name),
            "{name} is both honoured and a no-op"
        );
    }
    for name in HONOURED {
        assert!(
            lookup(name).is_some(),
            "{name} is not a kube-apiserver flag"
        );
    }
}
