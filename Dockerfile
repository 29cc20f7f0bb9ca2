# The fastify-kernel example service as a container image (production defaults; debug is refused
# in prod unless APP_FORCE_DEBUG=1). Build: docker build -t fastify-kernel .
# Run: docker run -p 8000:8000 -e APP_SESSION_SECRET=<32+ random characters> fastify-kernel
# (production refuses to start without a session secret).
FROM node:24-bookworm-slim AS build
WORKDIR /app
# the plugin and the service are one npm workspace: one lockfile, one install
COPY package.json package-lock.json ./
COPY service/package.json service/
# no install script runs: only devDependencies have one (Prisma's, esbuild's…), and the image needs
# none (test/consumer/lockfile.test.ts holds the rule)
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.base.json index.ts ./
COPY src src
COPY plugins plugins
COPY cli cli
COPY templates templates
COPY service service
# the prune takes the lockfile's tree as it is: the test libraries' optional peers disagree among
# themselves (typeorm names better-sqlite3 12, the suite runs 13), which is nothing to the image,
# whose devDependencies go
RUN npm run build && npm prune --omit=dev --legacy-peer-deps

FROM node:24-bookworm-slim
ENV NODE_ENV=production APP_ENV=prod HOST=0.0.0.0 PORT=8000 LOG_LEVEL=info
WORKDIR /app
COPY --from=build /app/package.json ./
# node_modules/fastify-kernel links to /app itself: the service imports the plugin by its name
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/templates templates
COPY --from=build /app/service/package.json service/
COPY --from=build /app/service/dist service/dist
COPY --from=build /app/service/templates service/templates
# var/ holds the profiler's file storage when debug is forced on
RUN mkdir -p var && chown node:node var
USER node
EXPOSE 8000
# GET /_health answers 200 while the process serves requests (Redis' state is in the body; Redis
# down does not make a replica unhealthy: it still answers). No curl in the slim image: Node asks.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/_health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# exec form: the Node process gets SIGTERM directly and shuts down gracefully
CMD ["node", "service/dist/main.js"]
