// pixelhouse browser pixel. Served minified at /tr/pixel.js; no dependencies.
// Usage: <script async src="https://YOUR-HOST/tr/pixel.js" data-pixel-id="PIXEL_ID"></script>
// then pixelhouse('track', 'add_to_cart', { value: 10, currency: 'USD' }, { eventId: 'ev-1' }).
(() => {
  var w = window;
  var d = document;
  var script = d.currentScript;
  var endpoint = `${script?.src ? new URL(script.src).origin : ""}/tr/api/collect`;
  var pixelId = script ? script.getAttribute("data-pixel-id") : null;
  var autoPageView = script?.getAttribute("data-auto-page-view") !== "false";
  var KEY = "_pxh_id";

  function cookie(name) {
    var m = d.cookie.match(new RegExp(`(?:^|; )${name}=([^;]*)`));
    return m ? decodeURIComponent(m[1]) : "";
  }

  function newId() {
    if (w.crypto?.randomUUID) return w.crypto.randomUUID();
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  // A first-party anonymous id: cookie first (shared across subdomain pages), localStorage as backup.
  function identityId() {
    var id = cookie(KEY);
    try {
      id = id || w.localStorage.getItem(KEY) || "";
    } catch (_) {}
    id = id || newId();
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Safari and Firefox
    d.cookie = `${KEY}=${encodeURIComponent(id)}; path=/; max-age=31536000; SameSite=Lax`;
    try {
      w.localStorage.setItem(KEY, id);
    } catch (_) {}
    return id;
  }

  function send(event) {
    if (!pixelId) return false;
    var body = JSON.stringify({ pixelId: pixelId, events: [event] });
    // text/plain keeps the request "simple": no CORS preflight, and sendBeacon survives page unloads.
    if (w.navigator.sendBeacon?.(endpoint, new Blob([body], { type: "text/plain" }))) {
      return true;
    }
    if (w.fetch) {
      w.fetch(endpoint, {
        method: "POST",
        body: body,
        keepalive: true,
        credentials: "omit",
        headers: { "content-type": "text/plain" },
      });
      return true;
    }
    return false;
  }

  function track(name, props, options) {
    var o = options || {};
    var ev = {
      name: String(name),
      identityId: identityId(),
      timestamp: new Date().toISOString(),
      page: { url: w.location.href },
      referrer: d.referrer || undefined,
      locale: w.navigator.language || undefined,
      viewport: {
        viewportWidth: w.innerWidth,
        viewportHeight: w.innerHeight,
        pageHeight: d.documentElement.scrollHeight,
        devicePixelRatio: w.devicePixelRatio || 1,
      },
      click: { fbp: cookie("_fbp") || undefined, fbc: cookie("_fbc") || undefined },
    };
    if (o.eventId) ev.eventId = String(o.eventId);
    if (props) ev.eventProperties = props;
    if (o.userProperties) ev.userProperties = o.userProperties;
    return send(ev);
  }

  var api = {
    init: (id) => {
      pixelId = String(id);
      if (autoPageView) track("page_view");
    },
    track: track,
    identify: (userProperties) => track("identify", undefined, { userProperties: userProperties }),
    identityId: identityId,
  };

  function call(args) {
    var fn = api[args[0]];
    return fn ? fn(...Array.prototype.slice.call(args, 1)) : undefined;
  }

  var queued = w.pixelhouse?.q || [];
  w.pixelhouse = (...args) => call(args);
  if (pixelId && autoPageView && !queued.some((a) => a[0] === "init")) track("page_view");
  queued.forEach(call);
})();
