import { describe, expect, it } from "vitest";
import { parseUserAgent } from "../../../src/ingest/enrich/user-agent.js";

const UA = {
  chromeWindows:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  edgeWindows:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51",
  safariIphone:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  safariIpad:
    "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1",
  safariMac:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
  chromeAndroid:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
  chromeAndroidTablet:
    "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  cubotPhone:
    "Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
  firefoxLinux: "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
  googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  googlebotSmartphone:
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.201 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  bingbot: "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
  curl: "curl/8.4.0",
  pythonRequests: "python-requests/2.31.0",
  headlessChrome:
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36",
  genericCrawler: "Mozilla/5.0 (compatible; ExampleCrawler/3.1; +https://example.org/crawler)",
  playstation: "Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko)",
} as const;

describe("parseUserAgent", () => {
  it.each([
    ["chromeWindows", { browser: "Chrome", browserVersion: "124.0.0.0", os: "Windows", device: "desktop" }],
    ["edgeWindows", { browser: "Edge", browserVersion: "124.0.2478.51", os: "Windows", device: "desktop" }],
    ["safariIphone", { browser: "Mobile Safari", browserVersion: "17.4", os: "iOS", device: "mobile" }],
    ["safariIpad", { browser: "Mobile Safari", browserVersion: "16.6", os: "iOS", device: "tablet" }],
    ["safariMac", { browser: "Safari", browserVersion: "17.4", os: "Mac OS", device: "desktop" }],
    [
      "chromeAndroid",
      { browser: "Chrome", browserVersion: "124.0.6367.82", os: "Android", device: "mobile" },
    ],
    [
      "chromeAndroidTablet",
      { browser: "Chrome", browserVersion: "124.0.0.0", os: "Android", device: "tablet" },
    ],
    ["cubotPhone", { browser: "Chrome", browserVersion: "120.0.0.0", os: "Android", device: "mobile" }],
    ["firefoxLinux", { browser: "Firefox", browserVersion: "125.0", os: "Linux", device: "desktop" }],
    ["googlebot", { browser: "Googlebot", browserVersion: "2.1", os: "", device: "bot" }],
    ["googlebotSmartphone", { browser: "Googlebot", browserVersion: "2.1", os: "Android", device: "bot" }],
    ["bingbot", { browser: "bingbot", browserVersion: "2.0", os: "", device: "bot" }],
    ["curl", { browser: "curl", browserVersion: "8.4.0", os: "", device: "bot" }],
    ["pythonRequests", { browser: "python-requests", browserVersion: "2.31.0", os: "", device: "bot" }],
    [
      "headlessChrome",
      { browser: "HeadlessChrome", browserVersion: "124.0.0.0", os: "Linux", device: "bot" },
    ],
    ["genericCrawler", { browser: "ExampleCrawler", browserVersion: "3.1", os: "", device: "bot" }],
    ["playstation", { os: "PlayStation", device: "other" }],
  ] as const)("%s", (key, expected) => {
    expect(parseUserAgent(UA[key])).toMatchObject(expected);
  });

  it("gives empty fields for an empty user agent", () => {
    const empty = { browser: "", browserVersion: "", os: "", device: "" };
    expect(parseUserAgent(undefined)).toEqual(empty);
    expect(parseUserAgent("")).toEqual(empty);
    expect(parseUserAgent("   ")).toEqual(empty);
  });

  it("classifies an unrecognisable string as other", () => {
    expect(parseUserAgent("SomethingWeird/1.0")).toEqual({
      browser: "",
      browserVersion: "",
      os: "",
      device: "other",
    });
  });

  it("answers repeated strings from the cache, as a frozen object", () => {
    const first = parseUserAgent(UA.chromeWindows);
    expect(parseUserAgent(UA.chromeWindows)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it("caches on the first 500 characters only, so huge unique strings cannot grow the cache", () => {
    const base = UA.firefoxLinux.padEnd(500, " x");
    expect(parseUserAgent(`${base}-tail-one`)).toBe(parseUserAgent(`${base}-tail-two`));
  });

  it("evicts the least recently used entry beyond 10,000 distinct strings", () => {
    const ua = (i: number): string => `${UA.chromeWindows} Probe/${i}`;
    const first = parseUserAgent(ua(0));
    for (let i = 1; i <= 10_000; i++) parseUserAgent(ua(i));
    const again = parseUserAgent(ua(0));
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
