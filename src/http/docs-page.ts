import { createRequire } from "node:module";
import { dirname } from "node:path";
import express, { type Router } from "express";

// The package's folder, without loading its 1.7 MB bundle into this process.
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>pixelhouse API reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true,
  persistAuthorization: false, tryItOutEnabled: true });`;

/** The human API reference at /docs, served from the bundled swagger-ui-dist package (no CDN). */
export function docsRouter(): Router {
  const router = express.Router();
  router.get("/docs", (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  // Only the page's assets: the package also ships a demo index.html pointing at a public petstore.
  router.use("/docs/assets", (req, res, next) =>
    /\.(js|css|png|map)$/.test(req.path) ? next() : res.status(404).json({ message: "Not Found" }),
  );
  router.use("/docs/assets", express.static(SWAGGER_UI_DIR, { index: false, maxAge: "1h" }));
  return router;
}
