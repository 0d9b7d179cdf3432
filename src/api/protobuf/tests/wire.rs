//! The wire format and the envelope: packed and unpacked repeated
//! scalars, unknown tags skipped, and the errors of malformed bytes.

use super::*;

#[test]
fn packed_and_unpacked_repeated_scalars() {
    const NAME: &str = "io.k8s.api.core.v1.PodSecurityContext";
    // prost writes `packed = "false"` fields unpacked.
    let unpacked = core::PodSecurityContext {
        supplemental_groups: vec![1000, 2000, -1],
        ..Default::default()
    }
    .encode_to_vec();
    // The same field (tag 4, int64) packed: key 0x22, length, varints.
    let mut payload = Vec::new();
    for v in [1000i64, 2000, -1] {
        prost::encoding::encode_varint(v as u64, &mut payload);
    }
    let mut packed = vec![0x22];
    prost::encoding::encode_varint(payload.len() as u64, &mut packed);
    packed.extend(payload);
    let want = json!({"supplementalGroups": [1000, 2000, -1]});
    assert_eq!(decode_message(NAME, &unpacked).unwrap(), want);
    assert_eq!(decode_message(NAME, &packed).unwrap(), want);
}

#[test]
fn unknown_tags_are_skipped() {
    let mut raw = configmap().encode_to_vec();
    // tag 99 varint, tag 100 length-delimited, tag 101 fixed32, tag 102 fixed64
    raw.extend([0x98, 0x06, 0x07]);
    raw.extend([0xa2, 0x06, 0x02, b'h', b'i']);
    raw.extend([0xad, 0x06, 1, 2, 3, 4]);
    raw.extend([0xb1, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]);
    let v = decode(&envelope("v1", "ConfigMap", raw)).unwrap();
    assert_eq!(v["data"]["a"], "b");
}

#[test]
fn errors() {
    let good = encode("v1", "ConfigMap", &configmap());
    assert_eq!(decode(&good[4..]), Err(DecodeError::MissingPrefix));
    assert_eq!(decode(b"{}"), Err(DecodeError::MissingPrefix));
    assert!(matches!(
        decode(&encode("v1", "Frobnicator", &configmap())),
        Err(DecodeError::UnknownKind { ref kind, .. }) if kind == "Frobnicator"
    ));
    assert!(matches!(
        decode(&encode("example.com/v1", "Widget", &configmap())),
        Err(DecodeError::UnknownKind { .. })
    ));
    for cut in [good.len() - 1, good.len() - 7, 12] {
        let err = decode(&good[..cut]).unwrap_err();
        assert!(
            matches!(err, DecodeError::Truncated(_)),
            "cut at {cut}: {err:?}"
        );
    }
    // A truncated object inside a complete envelope.
    let raw = configmap().encode_to_vec();
    let err = decode(&envelope("v1", "ConfigMap", raw[..raw.len() - 3].to_vec())).unwrap_err();
    assert!(matches!(err, DecodeError::Truncated(_)), "{err:?}");
    assert!(err.to_string().contains("truncated"), "{err}");

    let mut u = Unknown::decode(&good[4..]).unwrap();
    u.content_encoding = s("gzip");
    let mut bytes = MAGIC.to_vec();
    bytes.extend(u.encode_to_vec());
    assert_eq!(
        decode(&bytes),
        Err(DecodeError::ContentEncoding("gzip".into()))
    );
    assert!(decode(MAGIC).is_err());
}
