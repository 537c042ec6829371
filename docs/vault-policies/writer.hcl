# apnsctl writer: the engineers who import, rotate, update and remove credentials.
# Everything a reader may do, plus writing the store's entries (KV keeps each
# replaced version until destroyed) and importing token keys into Transit, never
# exportable. It cannot make a Transit key exportable or delete one: no update on
# transit/keys/NAME or transit/keys/NAME/config. (Keys are read through "+", not
# "apns-*": Vault prefers the rule whose first wildcard comes later, so a glob
# rule for apns-* would shadow the import rule below and refuse every import.)
path "secret/data/apnsctl/*"         { capabilities = ["create", "read", "update", "delete"] }
path "secret/metadata/apnsctl/*"     { capabilities = ["read", "list", "delete"] }
path "transit/wrapping_key"          { capabilities = ["read"] }
path "transit/keys/+"                { capabilities = ["read"] }
path "transit/keys/+/import"         { capabilities = ["update"] }
path "transit/sign/apns-*"           { capabilities = ["update"] }
path "sys/internal/ui/mounts/secret" { capabilities = ["read"] }
