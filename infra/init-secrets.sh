#!/bin/sh
# First start of docker-compose: makes the deployment's secrets in DIR, readable by Quarry's user only
# (0600): the internal credential every gRPC call carries (QUARRY_INTERNAL_TOKEN_FILE), the key that
# signs cursors (QUARRY_CURSOR_SECRET_FILE), the key that signs embed tokens (QUARRY_EMBED_SECRET_FILE,
# the gateway's), the keys that sign webhooks and large deliveries' links (QUARRY_WEBHOOK_KEY_FILE, QUARRY_LINK_KEY_FILE, one each for every gateway) and the chart queue's Redis password (REDIS_PASSWORD_FILE; the redis container reads it
# at start). Existing ones are kept: a new key on every start would
# void every cursor handed out, and processes started apart would stop trusting each other.
set -eu
dir="${1:?usage: init-secrets.sh DIR}"
umask 077
mkdir -p "$dir"
chmod 700 "$dir"
for name in internal-token cursor-secret redis-password embed-secret webhook-key link-key; do
  file="$dir/$name"
  if [ ! -s "$file" ]; then
    # Written aside and renamed, so a reader never sees a half-written secret.
    node -e "process.stdout.write(require('node:crypto').randomBytes(32).toString('base64url') + '\n')" > "$file.tmp"
    mv "$file.tmp" "$file"
    echo "generated $file"
  fi
  chmod 600 "$file"
done
