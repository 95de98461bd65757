# pixelhouse service image. No build step: the TypeScript sources run through tsx, which is a runtime
# dependency (bin/pixelhouse.mjs registers it), so `npm ci --omit=dev` is all the install there is.
# bookworm (glibc), not Alpine: chDB ships prebuilt libraries for glibc only, and src/stores imports it
# even when CLICKHOUSE_URL points at a server.
FROM node:20-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY tsconfig.json ./
COPY bin/ bin/
COPY sql/ sql/
COPY src/ src/
# The browser sources of /console and /dashboards, bundled by the service on first request.
COPY web/ web/

# Embedded mode (no store URLs) keeps its data in DATA_DIR=./.pixelhouse: make it writable for the
# unprivileged user. HOST stays at its safe default (127.0.0.1); docker-compose.yml sets HOST=0.0.0.0.
RUN mkdir -p /app/.pixelhouse && chown node:node /app/.pixelhouse
USER node

EXPOSE 3000
CMD ["node", "bin/pixelhouse.mjs", "serve"]
