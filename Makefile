# Ballast — `make run` and `make test` work on a fresh machine with ../shared beside the checkout.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PORT ?= 8787
export BALLAST_LOG ?= info

.PHONY: help install build run serve test lint typecheck openapi bench backtest clean backfill verify-snapshot schedule

help: ## List targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' -v port='$(PORT)' '{gsub(/\$$\(PORT\)/, port, $$2); printf "  make %-10s %s\n", $$1, $$2}'

node_modules/.package-lock.json: package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json ## Install dependencies when missing

build: install ## Build and publish from the recorded capture (as-of 2026-09-03T00:00Z)
	npx tsx build/cli.ts build

# One line, before any build, when the API port is taken.
PORT_CHECK = @node -e "const s=require('net').createServer();s.once('error',(e)=>{console.error(e.code==='EADDRINUSE'?'Port $(PORT) on 127.0.0.1 is taken (another make run?): stop that server, or use make run PORT=<another port>':'Port $(PORT): '+e.message);process.exit(1)});s.listen($(PORT),'127.0.0.1',()=>s.close())"

# Process settings of the API server (make run, make serve; make bench starts its API through make serve):
# at most 2 glibc malloc arenas (PGlite's WebAssembly compiler threads otherwise keep tens of MB in arenas
# of their own) and 16 MiB V8 semi-spaces (4 MiB: a scavenge every ~150 cached answers under load, 16 MiB: every ~1,600); see docs/benchmarks.md.
SERVER_ENV = MALLOC_ARENA_MAX=2 NODE_OPTIONS="--max-semi-space-size=16 $$NODE_OPTIONS"

run: install ## Build when inputs or code changed (else reuse the serving build), then serve on 127.0.0.1:$(PORT) with the development key (kept in data/state/dev-key) of DEV_KEY_RATE_LIMIT req/min (default 120)
	$(PORT_CHECK)
	npx tsx build/cli.ts build --if-changed
	PORT=$(PORT) DEV_KEY_RATE_LIMIT=$(or $(DEV_KEY_RATE_LIMIT),120) $(SERVER_ENV) npx tsx api/server.ts --dev-key

serve: install ## Serve the published build without building (port and development key as make run)
	$(PORT_CHECK)
	PORT=$(PORT) DEV_KEY_RATE_LIMIT=$(or $(DEV_KEY_RATE_LIMIT),120) $(SERVER_ENV) npx tsx api/server.ts --dev-key

# The type check runs beside the suite, whose first minute is the global setup's build (one core mostly
# idle): ~40 s less than one after the other on 2 cores. Its output is printed when both have ended; either
# failing fails make test.
test: install ## Run every test (unit, sql, contract, api, e2e) after the style gate, the type check beside them
	bash scripts/ensure-services.sh
	npx biome ci --reporter=summary .
	@types_log=$$(mktemp); echo "npx tsc --noEmit (beside the suite)"; npx tsc --noEmit > $$types_log 2>&1 & types_pid=$$!; \
	echo "npx vitest run"; npx vitest run; suite=$$?; \
	wait $$types_pid; types=$$?; cat $$types_log; rm -f $$types_log; \
	if [ $$types -ne 0 ]; then echo "make test: the type check failed (npx tsc --noEmit)" >&2; fi; \
	exit $$(( suite != 0 || types != 0 ))

lint: install ## Style gate: Biome format (line width 120) and lint (recommended, no any, no non-null assertions); make lint FIX=1 applies the safe fixes
	npx biome $(if $(FIX),check --write,ci --reporter=summary) .

openapi: install ## Regenerate the committed api/openapi.json
	npx tsx scripts/write-openapi.ts

backtest: install ## Depeg backtest over the recorded price archives: every event and its observations
	BALLAST_LOG=silent npx tsx scripts/backtest.ts

backfill: install ## Backfill dated snapshots: make backfill FROM=2023-02-01 TO=2023-03-31 (published days are skipped)
	npx tsx build/cli.ts build --from $(FROM) --to $(TO)

verify-snapshot: install ## Rebuild the snapshot of DATE, compare it byte for byte, and verify the index chain over every stored day: make verify-snapshot DATE=2023-03-11 [CHAIN_HEAD=<chainHash>]
	npx tsx build/cli.ts verify-snapshot --date $(DATE) $(if $(CHAIN_HEAD),--chain-head $(CHAIN_HEAD))

schedule: install ## Live mode: run the scheduled jobs (capture → build as of now → publish) until SIGTERM/Ctrl-C; see docs/runbooks/running-live.md
	./node_modules/.bin/tsx build/cli.ts schedule

bench: install ## Print the benchmark table (build time/RSS, detection, API vs nginx)
	npx tsx scripts/bench.ts

clean: ## Remove local builds and state
	rm -rf data .tmp
