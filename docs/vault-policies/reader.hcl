# apnsctl reader: servers and CI that send notifications and check the store.
# Reads the store's index, files and secrets; shares the fleet's provider tokens;
# has Transit sign with the token keys. Cannot import, replace or remove anything.
# Written for --store vault:secret/apnsctl and Transit at transit/; change the
# mount and prefix to yours.
path "secret/data/apnsctl/files/*"   { capabilities = ["read"] }
path "secret/data/apnsctl/secrets/*" { capabilities = ["read"] }
path "secret/data/apnsctl/tokens/*"  { capabilities = ["read", "create", "update"] }
path "transit/keys/apns-*"           { capabilities = ["read"] }
path "transit/sign/apns-*"           { capabilities = ["update"] }
path "sys/internal/ui/mounts/secret" { capabilities = ["read"] }
