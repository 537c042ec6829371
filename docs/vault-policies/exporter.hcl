# apnsctl exporter: Prometheus metrics of the store (run with --skip-secrets) and
# /probe with token keys. Reads the store's index and public files, never a
# certificate's password or private key; shares provider tokens and has Transit
# sign for a probe's authentication check.
path "secret/data/apnsctl/files/*"   { capabilities = ["read"] }
path "secret/data/apnsctl/tokens/*"  { capabilities = ["read", "create", "update"] }
path "transit/keys/apns-*"           { capabilities = ["read"] }
path "transit/sign/apns-*"           { capabilities = ["update"] }
path "sys/internal/ui/mounts/secret" { capabilities = ["read"] }
