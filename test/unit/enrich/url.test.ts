import { describe, expect, it } from "vitest";
import { deriveFbc, parsePageUrl, referrerHost } from "../../../src/ingest/enrich/url.js";

const EMPTY_UTM = { source: "", medium: "", campaign: "", term: "", content: "", id: "" };

describe("parsePageUrl", () => {
  it("extracts host, path, UTM fields, click ids and ad ids", () => {
    const url =
      "https://www.shop.example.com/products/tee?utm_source=facebook&utm_medium=paid&utm_campaign=spring%20sale" +
      "&utm_term=tee&utm_content=video_1&utm_id=120200&fbclid=IwAR2abc&adset_id=555&ad_id=777";
    expect(parsePageUrl(url)).toEqual({
      pageUrl: url,
      pageHost: "shop.example.com",
      pagePath: "/products/tee",
      utm: {
        source: "facebook",
        medium: "paid",
        campaign: "spring sale",
        term: "tee",
        content: "video_1",
        id: "120200",
      },
      clickIds: { fbclid: "IwAR2abc" },
      campaignId: "120200",
      adsetId: "555",
      adId: "777",
    });
  });

  it("matches parameter names case-insensitively and decodes and trims values", () => {
    const s = parsePageUrl(
      "https://Shop.Example.com/?UTM_Source=%20Google%20&Utm_Medium=CPC+&GCLID=Cj0K%2Fx&ScCid=snap1",
    );
    expect(s.pageHost).toBe("shop.example.com");
    expect(s.utm.source).toBe("Google");
    expect(s.utm.medium).toBe("CPC");
    expect(s.clickIds).toEqual({ gclid: "Cj0K/x", sccid: "snap1" });
  });

  it("collects every known click id under its lower-cased name", () => {
    const names = [
      "gclid",
      "gbraid",
      "wbraid",
      "fbclid",
      "ttclid",
      "msclkid",
      "twclid",
      "li_fat_id",
      "ScCid",
      "epik",
      "dclid",
    ];
    const s = parsePageUrl(
      `https://shop.example.com/?${names.map((n, i) => `${n}=v${i}`).join("&")}&other=1`,
    );
    expect(s.clickIds).toEqual(Object.fromEntries(names.map((n, i) => [n.toLowerCase(), `v${i}`])));
  });

  it.each([
    ["utm_id wins over campaign_id and hsa_cam", "?utm_id=1&campaign_id=2&hsa_cam=3", "1", "", ""],
    ["campaign_id", "?campaign_id=2&hsa_cam=3", "2", "", ""],
    ["hsa_* parameters", "?hsa_cam=3&hsa_grp=4&hsa_ad=5", "3", "4", "5"],
    ["ad_group_id", "?ad_group_id=9&hsa_grp=4", "", "9", ""],
    ["adset_id wins over ad_group_id", "?ad_group_id=9&adset_id=8", "", "8", ""],
    ["ad_id wins over hsa_ad", "?hsa_ad=5&ad_id=6", "", "", "6"],
  ])("%s", (_name, query, campaignId, adsetId, adId) => {
    const s = parsePageUrl(`https://shop.example.com/${query}`);
    expect([s.campaignId, s.adsetId, s.adId]).toEqual([campaignId, adsetId, adId]);
  });

  it("takes the first non-empty value of a repeated parameter", () => {
    expect(parsePageUrl("https://s.example/?utm_source=&utm_source=a&utm_source=b").utm.source).toBe("a");
  });

  it("keeps the path encoded and ignores the fragment", () => {
    const s = parsePageUrl("https://shop.example.com/a%20b/c#utm_source=hash");
    expect(s.pagePath).toBe("/a%20b/c");
    expect(s.utm.source).toBe("");
  });

  it("strips www. and a trailing root dot from the host", () => {
    expect(parsePageUrl("https://WWW.Example.COM./").pageHost).toBe("example.com");
    expect(parsePageUrl("http://localhost:3000/x").pageHost).toBe("localhost");
  });

  it.each([
    ["undefined", undefined, ""],
    ["empty", "", ""],
    ["relative path", "/products?utm_source=x", "/products?utm_source=x"],
    ["no scheme", "shop.example.com/?utm_source=x", "shop.example.com/?utm_source=x"],
    ["host:port without scheme", "localhost:3000/?utm_source=x", "localhost:3000/?utm_source=x"],
    ["garbage", "ht!tp://%%%", "ht!tp://%%%"],
    ["no host", "about:blank", "about:blank"],
  ])("gives empty signals for %s but keeps pageUrl", (_name, url, pageUrl) => {
    expect(parsePageUrl(url)).toEqual({
      pageUrl,
      pageHost: "",
      pagePath: "",
      utm: EMPTY_UTM,
      clickIds: {},
      campaignId: "",
      adsetId: "",
      adId: "",
    });
  });

  it("survives malformed percent-encoding in values", () => {
    expect(parsePageUrl("https://s.example/?utm_source=%E0%A4%A").utm.source).not.toBe("");
  });
});

describe("referrerHost", () => {
  it.each([
    ["https://www.Google.co.uk/search?q=x", "google.co.uk"],
    ["https://l.facebook.com/l.php?u=x", "l.facebook.com"],
    ["android-app://com.google.android.gm/", "com.google.android.gm"],
    ["http://203.0.113.5:8080/", "203.0.113.5"],
    ["", ""],
    [undefined, ""],
    ["not a url", ""],
    ["/relative", ""],
  ])("%j → %j", (ref, host) => {
    expect(referrerHost(ref)).toBe(host);
  });
});

describe("deriveFbc", () => {
  it("follows Meta's fb.1.<ms>.<fbclid> format", () => {
    expect(deriveFbc("IwAR2abc", 1_718_000_000_123)).toBe("fb.1.1718000000123.IwAR2abc");
  });

  it("is empty without an fbclid or a usable time", () => {
    expect(deriveFbc("", 1_718_000_000_123)).toBe("");
    expect(deriveFbc("   ", 1_718_000_000_123)).toBe("");
    expect(deriveFbc("x", Number.NaN)).toBe("");
  });

  it("drops fractions of a millisecond", () => {
    expect(deriveFbc("x", 1_718_000_000_123.9)).toBe("fb.1.1718000000123.x");
  });
});
