# apnsctl reader: servers and CI that send notifications and check the store.
# Reads the store's index, files and secrets; has Transit sign with the token
# keys. It mints the fleet's shared provider tokens (create and update on
# tokens/): a token there is used only once verified against the key's public
# key, so a reader can replace the shared token but never make others send with
# a token the key did not sign; and an instance keeps its own token while it is
# fresh (writing it back over what it finds), so a reader writing there cannot
# make the fleet switch tokens faster than APNs allows. Cannot import, replace or
# remove anything.
# Written for --store vault:secret/apnsctl and Transit at transit/; change the
# mount and prefix to yours.
path "secret/data/apnsctl/files/*"   { capabilities = ["read"] }
path "secret/data/apnsctl/secrets/*" { capabilities = ["read"] }
path "secret/data/apnsctl/tokens/*"  { capabilities = ["read", "create", "update"] }
path "transit/keys/apns-*"           { capabilities = ["read"] }
path "transit/sign/apns-*"           { capabilities = ["update"] }
path "sys/internal/ui/mounts/secret" { capabilities = ["read"] }
