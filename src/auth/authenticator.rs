//! The authenticator chain: client certificate, then bearer token, then
//! (when allowed) anonymous, with upstream's fail-on-error rule: a
//! credential that is presented and wrong is a 401 even when anonymous
//! access is on.

use std::sync::Arc;

use super::request_header::HeaderNames;
use super::tokenfile::TokenFile;
use super::x509::ClientCertIdentity;
use super::UserInfo;

/// What a request presents.
#[derive(Debug, Default)]
pub struct Credentials<'a> {
    pub client_cert: Option<&'a ClientCertIdentity>,
    pub bearer_token: Option<&'a str>,
    /// The request's headers, read only behind an authenticating front
    /// proxy's certificate (`X-Remote-User` and friends).
    pub headers: Option<&'a http::HeaderMap>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthenticationError {
    #[error("x509: {0}")]
    Certificate(String),
    #[error("invalid bearer token")]
    InvalidToken,
    #[error("no credentials provided and anonymous access is off")]
    NoCredentials,
}

/// The authenticated user and which authenticator vouched for it.
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// Shared: a request's filters and handlers read it, and a
    /// connection's certificate user is handed to each of its requests.
    pub user: Arc<UserInfo>,
    pub method: &'static str,
}

/// What [`Authenticator::authenticate_now`] found.
#[derive(Debug)]
pub enum Identified<'c> {
    /// Decided: the user, or why the request is refused.
    Now(Result<Authenticated, AuthenticationError>),
    /// A bearer token only [`Authenticator::token_user`] can place.
    Token(&'c str),
}

#[derive(Clone)]
pub struct Authenticator {
    tokens: Option<Arc<TokenFile>>,
    anonymous: bool,
    /// ServiceAccount JWTs: the issuer that verifies them, and where the
    /// objects they are bound to are looked up.
    service_accounts: Option<(
        Arc<super::serviceaccount::TokenIssuer>,
        crate::registry::Registries,
    )>,
    /// Bootstrap tokens are Secrets looked up here.
    bootstrap_tokens: Option<crate::registry::Registries>,
    /// Tokens nothing else knows go to this webhook.
    webhook: Option<Arc<super::token_webhook::TokenWebhook>>,
    /// The headers a front proxy names its user in.
    request_headers: Arc<HeaderNames>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

impl Authenticator {
    pub fn new(tokens: Option<TokenFile>, anonymous: bool) -> Self {
        Authenticator {
            tokens: tokens.map(Arc::new),
            anonymous,
            service_accounts: None,
            bootstrap_tokens: None,
            webhook: None,
            request_headers: Arc::new(HeaderNames::standard().clone()),
        }
    }

    /// Read front proxies' users from these headers (`--requestheader-*-headers`).
    pub fn with_request_headers(mut self, names: HeaderNames) -> Self {
        self.request_headers = Arc::new(names);
        self
    }

    /// The headers a front proxy names its user in; cleared once read.
    pub fn request_headers(&self) -> &HeaderNames {
        &self.request_headers
    }

    /// Also ask a token webhook about tokens nothing else knows (upstream
    /// tries it last among the token authenticators).
    pub fn with_token_webhook(mut self, webhook: Arc<super::token_webhook::TokenWebhook>) -> Self {
        self.webhook = Some(webhook);
        self
    }

    /// Also accept bootstrap tokens (`--enable-bootstrap-token-auth`).
    pub fn with_bootstrap_tokens(mut self, registries: crate::registry::Registries) -> Self {
        self.bootstrap_tokens = Some(registries);
        self
    }

    /// The authenticators after the file and ServiceAccount ones, in
    /// upstream's order: bootstrap tokens, then the webhook.
    async fn later_token_user(&self, token: &str) -> Option<(UserInfo, &'static str)> {
        if let Some(registries) = &self.bootstrap_tokens {
            if let Some(user) = super::bootstrap_token::authenticate(registries, token).await {
                return Some((user, "bootstrap"));
            }
        }
        match &self.webhook {
            Some(w) => w.authenticate(token).await.map(|u| (u, "webhook")),
            None => None,
        }
    }

    /// A TokenReview: who `token` stands for, and which of the `targets`
    /// audiences (the API server's own when empty) it is valid for, as
    /// upstream's audience-aware authenticators answer. Static tokens are
    /// valid for the API server's audiences only.
    pub async fn review_token(
        &self,
        token: &str,
        targets: &[String],
    ) -> Result<(UserInfo, Vec<String>), String> {
        let api_audiences: Vec<String> = self
            .service_accounts
            .as_ref()
            .map(|(i, _)| i.api_audiences.clone())
            .unwrap_or_default();
        let targets: Vec<String> = if targets.is_empty() {
            api_audiences.clone()
        } else {
            targets.to_vec()
        };
        let invalid_for = |token_auds: &[String]| {
            format!(
                "token audiences {token_auds:?} is invalid for the target audiences {targets:?}"
            )
        };
        if let Some(user) = self.tokens.as_ref().and_then(|t| t.lookup(token)) {
            let auds: Vec<String> = api_audiences
                .iter()
                .filter(|a| targets.contains(a))
                .cloned()
                .collect();
            if auds.is_empty() && !api_audiences.is_empty() {
                return Err(invalid_for(&api_audiences));
            }
            return Ok((user.clone().with_authenticated_group(), auds));
        }
        let Some((issuer, registries)) = &self.service_accounts else {
            return match self.later_token_user(token).await {
                Some((user, _)) => Ok((user.with_authenticated_group(), api_audiences)),
                None => Err("invalid bearer token".into()),
            };
        };
        match issuer.verify_for(token, &targets) {
            Some(Ok(claims)) => {
                let user = super::serviceaccount::authenticate(registries, &claims).await?;
                let auds = claims
                    .aud
                    .iter()
                    .filter(|a| targets.contains(a))
                    .cloned()
                    .collect();
                Ok((user.with_authenticated_group(), auds))
            }
            Some(Err(why)) if why.contains("InvalidAudience") => Err(invalid_for(
                &super::serviceaccount::unverified_audiences(token),
            )),
            Some(Err(_)) => Err("invalid bearer token".into()),
            None => match self.later_token_user(token).await {
                Some((user, _)) => Ok((user.with_authenticated_group(), api_audiences)),
                None => Err("invalid bearer token".into()),
            },
        }
    }

    /// Also accept ServiceAccount tokens this server issued.
    pub fn with_service_accounts(
        mut self,
        issuer: Arc<super::serviceaccount::TokenIssuer>,
        registries: crate::registry::Registries,
    ) -> Self {
        self.service_accounts = Some((issuer, registries));
        self
    }

    pub async fn authenticate(
        &self,
        creds: &Credentials<'_>,
    ) -> Result<Authenticated, AuthenticationError> {
        match self.authenticate_now(creds) {
            Identified::Now(decided) => decided,
            Identified::Token(token) => self.token_user(token).await,
        }
    }

    /// Who the request is, when that is known without a lookup (client
    /// certificates, the token file, anonymous), or the bearer token that
    /// needs one (ServiceAccount, bootstrap and webhook tokens). The
    /// authenticators run in upstream's order either way.
    pub fn authenticate_now<'c>(&self, creds: &Credentials<'c>) -> Identified<'c> {
        match creds.client_cert {
            Some(ClientCertIdentity::FrontProxy { proxy, x509 }) => {
                if let Some(user) = creds.headers.and_then(|h| self.request_headers.user(h)) {
                    return Identified::Now(Ok(Authenticated {
                        user: user.with_authenticated_group().into(),
                        method: "requestheader",
                    }));
                }
                // Without a user header upstream goes on to the other
                // authenticators: the x509 one, when the client CA also
                // signed the proxy's certificate, then tokens.
                if let Some(user) = x509 {
                    return Identified::Now(Ok(Authenticated {
                        user: user.clone().with_authenticated_group().into(),
                        method: "x509",
                    }));
                }
                if creds.bearer_token.is_none() {
                    return Identified::Now(Err(AuthenticationError::Certificate(format!(
                        "front proxy {} sent no {} header",
                        crate::api::go_quote(proxy),
                        self.request_headers
                            .username
                            .first()
                            .map_or("user", String::as_str)
                    ))));
                }
            }
            Some(ClientCertIdentity::Verified(user)) => {
                return Identified::Now(Ok(Authenticated {
                    user: user.clone(),
                    method: "x509",
                }))
            }
            Some(ClientCertIdentity::Rejected(why)) => {
                // Upstream tries the other authenticators before failing; a
                // valid token still wins over a foreign certificate.
                if creds.bearer_token.is_none() {
                    return Identified::Now(Err(AuthenticationError::Certificate(why.clone())));
                }
            }
            None => {}
        }
        if let Some(token) = creds.bearer_token {
            if let Some(user) = self.tokens.as_ref().and_then(|t| t.lookup(token)) {
                return Identified::Now(Ok(Authenticated {
                    user: user.clone().with_authenticated_group().into(),
                    method: "token-file",
                }));
            }
            return Identified::Token(token);
        }
        if let Some(ClientCertIdentity::Rejected(why)) = creds.client_cert {
            return Identified::Now(Err(AuthenticationError::Certificate(why.clone())));
        }
        if self.anonymous {
            return Identified::Now(Ok(Authenticated {
                user: UserInfo::anonymous().into(),
                method: "anonymous",
            }));
        }
        Identified::Now(Err(AuthenticationError::NoCredentials))
    }

    /// The user of a bearer token that [`Authenticator::authenticate_now`]
    /// could not place: ServiceAccount, bootstrap and webhook tokens.
    pub async fn token_user(&self, token: &str) -> Result<Authenticated, AuthenticationError> {
        if let Some((issuer, registries)) = &self.service_accounts {
            match issuer.verify(token) {
                Some(Ok(claims)) => {
                    return match super::serviceaccount::authenticate(registries, &claims).await {
                        Ok(user) => Ok(Authenticated {
                            user: user.with_authenticated_group().into(),
                            method: "serviceaccount",
                        }),
                        Err(why) => {
                            tracing::debug!(error = %why, "service account token refused");
                            Err(AuthenticationError::InvalidToken)
                        }
                    };
                }
                Some(Err(why)) => {
                    tracing::debug!(error = %why, "service account token refused");
                    return Err(AuthenticationError::InvalidToken);
                }
                None => {}
            }
        }
        if let Some((user, method)) = self.later_token_user(token).await {
            return Ok(Authenticated {
                user: user.with_authenticated_group().into(),
                method,
            });
        }
        Err(AuthenticationError::InvalidToken)
    }
}
