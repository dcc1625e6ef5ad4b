import { type ServerConfig, type StartServerOptions, startServer } from "../../api/server.ts";

/**
 * Starts the real HTTP server (api/server.ts) on 127.0.0.1 at a free port, on the wall clock,
 * serving the data dir `dir` with its key store in Postgres at `databaseUrl` and API keys peppered
 * with `pepper`; `extra` adds or overrides config variables.
 */
export const startLocalServer = (
  dir: string,
  databaseUrl: string,
  pepper: string,
  extra: Partial<ServerConfig> = {},
  opts: StartServerOptions = {},
) =>
  startServer(
    {
      PORT: 0,
      HOST: "127.0.0.1",
      BALLAST_DATA_DIR: dir,
      CLOCK: "wall",
      DATABASE_URL: databaseUrl,
      API_KEY_PEPPER: pepper,
      ...extra,
    },
    opts,
  );
