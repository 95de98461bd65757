/**
 * User agent → browser, OS and device class, via ua-parser-js 1.x (MIT; 2.x is AGPL, keep it at 1).
 * Traffic repeats a few thousand distinct UA strings, so results are cached per string.
 */
import { LRUCache } from "lru-cache";
import UAParser from "ua-parser-js";

export type DeviceClass = "desktop" | "mobile" | "tablet" | "bot" | "other";

export interface UserAgentInfo {
  browser: string;
  browserVersion: string;
  os: string;
  /** '' only for an empty user agent. */
  device: DeviceClass | "";
}

const EMPTY: Readonly<UserAgentInfo> = Object.freeze({ browser: "", browserVersion: "", os: "", device: "" });

// ua-parser-js reads only the first 500 characters; cutting the key there as well stops a client
// that sends huge unique strings (no length cap on ingest) from filling the cache with them.
const MAX_UA_LENGTH = 500;

const cache = new LRUCache<string, Readonly<UserAgentInfo>>({ max: 10_000 });

// Named crawlers, monitoring and headless tools, and HTTP client libraries. The name and version
// become the "browser" because the parser knows none of them.
const BOT_TOKEN =
  /\b(googlebot|adsbot-google|mediapartners-google|google-inspectiontool|googleother|bingbot|bingpreview|yandexbot|baiduspider|duckduckbot|slurp|applebot|facebookexternalhit|facebookcatalog|meta-externalagent|twitterbot|linkedinbot|pinterestbot|slackbot|discordbot|telegrambot|ahrefsbot|semrushbot|mj12bot|dotbot|petalbot|bytespider|gptbot|chatgpt-user|claudebot|ccbot|amazonbot|headlesschrome|phantomjs|chrome-lighthouse|lighthouse|pingdom|uptimerobot|curl|wget|python-requests|python-urllib|python-httpx|aiohttp|go-http-client|okhttp|apache-httpclient|java|node-fetch|axios|undici|libwww-perl|scrapy|postmanruntime)\b(?:\/([\w.]+))?/i;
// Anything else calling itself a bot/crawler/spider. "Cubot" is a phone brand, not a crawler.
const GENERIC_BOT = /\b(?!cubot\b)([\w-]*(?:bot|crawler|spider|scraper))\b(?:\/([\w.]+))?/i;

// Parsers leave device.type empty for desktops; only a known desktop OS makes that "desktop".
const DESKTOP_OS =
  /^(windows|mac os|macos|linux|ubuntu|debian|fedora|chromium os|freebsd|openbsd|netbsd|solaris|mint|arch|gentoo|centos|red hat|suse|mandriva|slackware)/i;

function classifyDevice(type: string | undefined, os: string, ua: string): DeviceClass {
  if (type === "mobile") return "mobile";
  if (type === "tablet") return "tablet";
  if (type) return "other"; // console, smarttv, wearable, embedded, xr
  // Android without the "Mobile" token is the platform's own convention for tablets.
  if (/^android/i.test(os)) return /mobile/i.test(ua) ? "mobile" : "tablet";
  return DESKTOP_OS.test(os) ? "desktop" : "other";
}

function parse(ua: string): UserAgentInfo {
  const result = new UAParser(ua).getResult();
  const os = result.os.name ?? "";
  const bot = BOT_TOKEN.exec(ua) ?? GENERIC_BOT.exec(ua);
  if (bot) {
    return { browser: bot[1] ?? "", browserVersion: bot[2] ?? "", os, device: "bot" };
  }
  return {
    browser: result.browser.name ?? "",
    browserVersion: result.browser.version ?? "",
    os,
    device: classifyDevice(result.device.type, os, ua),
  };
}

export function parseUserAgent(ua: string | undefined): Readonly<UserAgentInfo> {
  const key = (ua ?? "").trim().slice(0, MAX_UA_LENGTH);
  if (!key) return EMPTY;
  let info = cache.get(key);
  if (!info) {
    info = Object.freeze(parse(key));
    cache.set(key, info);
  }
  return info;
}
