# apnsctl exporter: Prometheus metrics of the store (run with --skip-secrets) and
# /probe with token keys. Reads the store's index and public files, never a
# certificate's password or private key. It reads the fleet's provider tokens but
# does not mint them (no create or update on tokens/): when the shared token is
# old or not valid it has Transit sign a token for its own probes.
path "secret/data/apnsctl/files/*"   { capabilities = ["read"] }
path "secret/data/apnsctl/tokens/*"  { capabilities = ["read"] }
path "transit/keys/apns-*"           { capabilities = ["read"] }
path "transit/sign/apns-*"           { capabilities = ["update"] }
path "sys/internal/ui/mounts/secret" { capabilities = ["read"] }
