#!/usr/bin/env bash
# Drives every /v1 route with curl, as a new user would, and checks each status code against docs/api.md.
#   SETUP_TOKEN=… npm start &   then   bash tools/curl-walkthrough.sh [BASE_URL]
# Needs curl and node (for reading JSON). Exits non-zero on the first unexpected status.
set -euo pipefail
B="${1:-http://127.0.0.1:8080}"
TOKEN="${SETUP_TOKEN:?set SETUP_TOKEN to the setup token the server was started with}"
JSON='Content-Type: application/json'
body=$(mktemp)
trap 'rm -f "$body"' EXIT

# call EXPECTED METHOD PATH [curl args…]: prints the status line, keeps the body in $body.
call() {
  local expected=$1 method=$2 path=$3
  shift 3
  local status
  status=$(curl -s -o "$body" -w '%{http_code}' -X "$method" "$B$path" "$@")
  if [ "$status" != "$expected" ]; then
    printf 'FAIL %s %s: expected %s, got %s\n' "$method" "$path" "$expected" "$status"
    cat "$body"
    echo
    exit 1
  fi
  printf 'ok   %s %-48s %s\n' "$status" "$method ${path%%\?*}" "$(head -c 90 "$body" | tr '\n' ' ')"
}
field() { node -e 'let v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));for(const k of process.argv[2].split("."))v=v[k];process.stdout.write(String(v))' "$body" "$1"; }

# A first start initializes the embedded database and loads the model: allow two minutes.
for _ in $(seq 1 240); do
  curl -sf -o /dev/null "$B/readyz" && break
  sleep 0.5
done

call 200 GET /healthz
call 200 GET /readyz
call 200 GET /metrics
call 200 GET /v1/openapi.json
call 401 POST /v1/setup -H "$JSON" -d '{"org_name":"walkthrough"}'
call 201 POST /v1/setup -H "X-Setup-Token: $TOKEN" -H "$JSON" -d "{\"org_name\":\"walkthrough-$RANDOM$RANDOM\"}"
ADMIN="Authorization: Bearer $(field api_key)"

call 201 POST /v1/keys -H "$ADMIN" -H "$JSON" -d '{"name":"agent"}'
AGENT="Authorization: Bearer $(field api_key)"
KEY_ID=$(field id)
call 200 GET /v1/keys -H "$ADMIN"
call 403 GET /v1/keys -H "$AGENT"
call 401 GET /v1/anchors

call 201 POST /v1/anchors -H "$AGENT" -H "$JSON" -d '{"anchor_external_id":"customer-42","name":"Ada"}'
ANCHOR=$(field id)
call 200 POST /v1/anchors -H "$AGENT" -H "$JSON" -d '{"anchor_external_id":"customer-42"}'
call 200 GET "/v1/anchors?anchor_external_id=customer-42" -H "$AGENT"
call 200 GET "/v1/anchors/$ANCHOR" -H "$AGENT"
call 200 GET "/v1/anchors?anchor_external_id_prefix=customer" -H "$AGENT"
call 200 GET /v1/keys/current -H "$AGENT"

call 201 POST /v1/memories -H "$AGENT" -H "$JSON" \
  -d '{"agent_id":"bot","anchor_external_id":"customer-42","content":"Prefers to be contacted by email"}'
MEMORY=$(field id)
call 201 POST /v1/memories -H "$AGENT" -H "$JSON" -d '{"agent_id":"bot","content":"Escalations go to the on-call lead"}'
PRIVATE=$(field id)
call 200 GET "/v1/memories/$MEMORY" -H "$AGENT"
call 200 GET "/v1/memories/$MEMORY/history" -H "$AGENT"
call 200 GET "/v1/anchors/$ANCHOR/memories" -H "$AGENT"
call 201 POST /v1/memories -H "$AGENT" -H "$JSON" \
  -d '{"agent_id":"bot","anchor_external_id":"customer-42","content":"Lives in Lisbon"}'
WRONG=$(field id)
call 200 PATCH "/v1/memories/$WRONG" -H "$AGENT" -H "$JSON" -d '{"content":"Lives in Porto"}'
call 409 PATCH "/v1/memories/$WRONG" -H "$AGENT" -H "$JSON" -d '{"content":"Lives in Faro"}'

call 201 POST /v1/sessions -H "$AGENT" -H "$JSON" -d '{"agent_id":"bot","anchor_external_id":"customer-42"}'
SESSION=$(field id)
call 200 GET "/v1/sessions/$SESSION" -H "$AGENT"
call 200 GET "/v1/anchors/$ANCHOR/sessions" -H "$AGENT"
call 201 POST /v1/memories -H "$AGENT" -H "$JSON" \
  -d "{\"agent_id\":\"bot\",\"session_id\":\"$SESSION\",\"content\":\"Is travelling until Friday\"}"

call 201 POST /v1/canon -H "$ADMIN" -H "$JSON" -d '{"agent_id":"admin","content":"Never share contact details"}'
CANON=$(field id)
call 200 POST /v1/canon -H "$ADMIN" -H "$JSON" -d '{"agent_id":"admin","content":"  Never share   contact details "}'
call 403 POST /v1/canon -H "$AGENT" -H "$JSON" -d '{"agent_id":"bot","content":"x"}'
call 200 GET /v1/canon -H "$AGENT"
call 200 GET "/v1/canon/$CANON" -H "$AGENT"

call 200 GET "/v1/sessions/$SESSION/memories" -H "$AGENT"
call 200 GET "/v1/memories/recall?agent_id=bot&anchor_external_id=customer-42&session_id=$SESSION&query=how%20to%20contact" -H "$AGENT"
call 200 POST "/v1/sessions/$SESSION/end" -H "$AGENT"
call 200 POST "/v1/sessions/$SESSION/end" -H "$AGENT"
call 409 POST /v1/memories -H "$AGENT" -H "$JSON" -d "{\"agent_id\":\"bot\",\"session_id\":\"$SESSION\",\"content\":\"late\"}"

call 400 POST /v1/memories -H "$AGENT" -H "$JSON" -d '{"agent_id":"bot","content":"   "}'
call 400 POST /v1/memories -H "$AGENT" -H "$JSON" -d '{not json'
call 415 POST /v1/memories -H "$AGENT" -H 'Content-Type: text/plain' -d 'hello'
call 404 GET /v1/memories/not-a-uuid -H "$AGENT"
call 404 GET /v1/no-such-route -H "$AGENT"

call 200 GET /v1/audit -H "$ADMIN"
call 200 POST /v1/agents/bot/conversations/ingest -H "$AGENT" -H "$JSON" \
  -d '{"anchor_external_id":"customer-42","conversation_id":"c1","messages":[{"id":"m1","role":"user","content":"I live in Lisbon and I prefer phone calls."}]}'
call 200 POST /v1/agents/bot/conversations/ingest -H "$AGENT" -H "$JSON" \
  -d '{"anchor_external_id":"customer-42","conversation_id":"c1","messages":[{"id":"m1","role":"user","content":"I live in Lisbon and I prefer phone calls."}]}'
call 400 DELETE "/v1/anchors/$ANCHOR" -H "$ADMIN"
call 200 DELETE "/v1/anchors/$ANCHOR?purge=true" -H "$ADMIN"
call 404 GET "/v1/anchors/$ANCHOR" -H "$AGENT"
call 204 DELETE "/v1/memories/$PRIVATE" -H "$AGENT"
call 404 GET "/v1/memories/$PRIVATE" -H "$AGENT"
call 204 DELETE "/v1/canon/$CANON" -H "$ADMIN"
call 204 DELETE "/v1/keys/$KEY_ID" -H "$ADMIN"
call 401 GET /v1/anchors -H "$AGENT"
echo "every route answered as docs/api.md documents"
