# apnsctl exporter: Prometheus metrics of the store (run with --skip-secrets) and
# /probe of its certificates and token keys. /metrics reads the store's index and
# public files only. A probe of a certificate presents it in a TLS handshake, so it
# reads that certificate's secret: the password of its stored PKCS#12, or its
# private key when the bundle had none (the two secret kinds below, nothing else
# under secrets/). An exporter that probes no certificate can drop those two lines;
# one that probes a few can narrow them to those aliases: secrets/+/ALIAS/*.
# It reads the fleet's provider tokens but does not mint them (no create or update
# on tokens/): when the shared token is old or not valid it has Transit sign a
# token for its own probes. Token keys never leave Transit.
path "secret/data/apnsctl/files/*"                        { capabilities = ["read"] }
path "secret/data/apnsctl/secrets/+/+/pkcs12-password/*"  { capabilities = ["read"] }
path "secret/data/apnsctl/secrets/+/+/private-key/*"      { capabilities = ["read"] }
path "secret/data/apnsctl/tokens/*"                       { capabilities = ["read"] }
path "transit/keys/apns-*"                                { capabilities = ["read"] }
path "transit/sign/apns-*"                                { capabilities = ["update"] }
path "sys/internal/ui/mounts/secret"                      { capabilities = ["read"] }
