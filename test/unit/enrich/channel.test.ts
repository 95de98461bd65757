import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CHANNEL_RULES,
  CHANNELS,
  classifyTouch,
  EMAIL_SOURCES,
  isSameSite,
  MAIL_CLIENTS,
  matchRule,
  normalizeSource,
  OTHER_SOURCE_HOSTS,
  SEARCH_ENGINES,
  SMS_SOURCES,
  SOCIAL_NETWORKS,
  SOCIAL_SOURCES,
  SOURCE_ALIASES,
  type TouchInput,
} from "../../../src/ingest/enrich/channel.js";

const PAGE = "shop.example.com";

function touch(over: Partial<TouchInput>): TouchInput {
  return {
    utmSource: "",
    utmMedium: "",
    utmCampaign: "",
    clickIds: {},
    referrerHost: "",
    pageHost: PAGE,
    ...over,
  };
}

interface Case {
  name: string;
  input: Partial<TouchInput>;
  rule: string;
  channel: string;
  source: string;
  isTouch?: boolean;
}

const CASES: Case[] = [
  // click ids
  {
    name: "fbclid",
    input: { clickIds: { fbclid: "IwAR1" } },
    rule: "click_fbclid",
    channel: "paid_social",
    source: "facebook",
  },
  {
    name: "fbclid with utm_source=ig",
    input: { clickIds: { fbclid: "x" }, utmSource: "ig", utmMedium: "paid" },
    rule: "click_fbclid",
    channel: "paid_social",
    source: "instagram",
  },
  {
    name: "fbclid from l.instagram.com",
    input: { clickIds: { fbclid: "x" }, referrerHost: "l.instagram.com" },
    rule: "click_fbclid",
    channel: "paid_social",
    source: "instagram",
  },
  {
    name: "fbclid with a non-Meta utm_source stays facebook",
    input: { clickIds: { fbclid: "x" }, utmSource: "newsletter" },
    rule: "click_fbclid",
    channel: "paid_social",
    source: "facebook",
  },
  {
    name: "ttclid",
    input: { clickIds: { ttclid: "x" } },
    rule: "click_ttclid",
    channel: "paid_social",
    source: "tiktok",
  },
  {
    name: "twclid",
    input: { clickIds: { twclid: "x" } },
    rule: "click_twclid",
    channel: "paid_social",
    source: "twitter",
  },
  {
    name: "li_fat_id",
    input: { clickIds: { li_fat_id: "x" } },
    rule: "click_li_fat_id",
    channel: "paid_social",
    source: "linkedin",
  },
  {
    name: "sccid",
    input: { clickIds: { sccid: "x" } },
    rule: "click_sccid",
    channel: "paid_social",
    source: "snapchat",
  },
  {
    name: "ScCid key case",
    input: { clickIds: { ScCid: "x" } },
    rule: "click_sccid",
    channel: "paid_social",
    source: "snapchat",
  },
  {
    name: "epik",
    input: { clickIds: { epik: "x" } },
    rule: "click_epik",
    channel: "paid_social",
    source: "pinterest",
  },
  {
    name: "gclid",
    input: { clickIds: { gclid: "x" } },
    rule: "click_google",
    channel: "paid_search",
    source: "google",
  },
  {
    name: "gbraid",
    input: { clickIds: { gbraid: "x" } },
    rule: "click_google",
    channel: "paid_search",
    source: "google",
  },
  {
    name: "wbraid",
    input: { clickIds: { wbraid: "x" } },
    rule: "click_google",
    channel: "paid_search",
    source: "google",
  },
  {
    name: "dclid",
    input: { clickIds: { dclid: "x" } },
    rule: "click_google",
    channel: "paid_search",
    source: "google",
  },
  {
    name: "msclkid",
    input: { clickIds: { msclkid: "x" } },
    rule: "click_msclkid",
    channel: "paid_search",
    source: "bing",
  },
  {
    name: "click id beats utm",
    input: { clickIds: { gclid: "x" }, utmSource: "klaviyo", utmMedium: "email" },
    rule: "click_google",
    channel: "paid_search",
    source: "google",
  },
  {
    name: "social click id beats search click id",
    input: { clickIds: { gclid: "x", ttclid: "y" } },
    rule: "click_ttclid",
    channel: "paid_social",
    source: "tiktok",
  },
  {
    name: "empty click id value is no click id",
    input: { clickIds: { gclid: "  " } },
    rule: "direct",
    channel: "direct",
    source: "",
    isTouch: false,
  },
  // utm_medium
  {
    name: "cpc from facebook is paid social",
    input: { utmSource: "facebook", utmMedium: "cpc" },
    rule: "utm_paid_social_source",
    channel: "paid_social",
    source: "facebook",
  },
  {
    name: "paid from Instagram keeps instagram",
    input: { utmSource: "Instagram", utmMedium: "paid" },
    rule: "utm_paid_social_source",
    channel: "paid_social",
    source: "instagram",
  },
  {
    name: "cpm from tiktok is paid social",
    input: { utmSource: "tiktok", utmMedium: "cpm" },
    rule: "utm_paid_social_source",
    channel: "paid_social",
    source: "tiktok",
  },
  {
    name: "cpc from google",
    input: { utmSource: "google", utmMedium: "cpc" },
    rule: "utm_paid_search",
    channel: "paid_search",
    source: "google",
  },
  {
    name: "upper-case ppc from Bing",
    input: { utmSource: "BING", utmMedium: "PPC" },
    rule: "utm_paid_search",
    channel: "paid_search",
    source: "bing",
  },
  { name: "sem", input: { utmMedium: "sem" }, rule: "utm_paid_search", channel: "paid_search", source: "" },
  {
    name: "paidsearch / paid_search",
    input: { utmSource: "duckduckgo", utmMedium: "Paid-Search" },
    rule: "utm_paid_search",
    channel: "paid_search",
    source: "duckduckgo",
  },
  {
    name: "cpm without social source is other",
    input: { utmSource: "dv360", utmMedium: "cpm" },
    rule: "utm_other",
    channel: "other",
    source: "dv360",
  },
  {
    name: "paid_social medium",
    input: { utmSource: "some_network", utmMedium: "paid_social" },
    rule: "utm_paid_social",
    channel: "paid_social",
    source: "some_network",
  },
  {
    name: "Paid Social spelled with a space",
    input: { utmSource: "x", utmMedium: "Paid Social" },
    rule: "utm_paid_social",
    channel: "paid_social",
    source: "twitter",
  },
  {
    name: "social_paid",
    input: { utmSource: "snap", utmMedium: "social_paid" },
    rule: "utm_paid_social",
    channel: "paid_social",
    source: "snapchat",
  },
  {
    name: "social medium",
    input: { utmSource: "linkedin", utmMedium: "social" },
    rule: "utm_organic_social",
    channel: "organic_social",
    source: "linkedin",
  },
  {
    name: "social-network medium",
    input: { utmSource: "reddit", utmMedium: "social-network" },
    rule: "utm_organic_social",
    channel: "organic_social",
    source: "reddit",
  },
  {
    name: "sm medium",
    input: { utmSource: "pinterest", utmMedium: "sm" },
    rule: "utm_organic_social",
    channel: "organic_social",
    source: "pinterest",
  },
  {
    name: "organic medium",
    input: { utmSource: "google.co.uk", utmMedium: "organic" },
    rule: "utm_organic_search",
    channel: "organic_search",
    source: "google",
  },
  {
    name: "email medium",
    input: { utmSource: "Klaviyo", utmMedium: "email", utmCampaign: "Spring" },
    rule: "utm_email",
    channel: "email",
    source: "klaviyo",
  },
  {
    name: "e-mail medium",
    input: { utmSource: "mailchimp", utmMedium: "E-Mail" },
    rule: "utm_email",
    channel: "email",
    source: "mailchimp",
  },
  {
    name: "newsletter medium without source takes the referrer",
    input: { utmMedium: "newsletter", referrerHost: "mail.google.com" },
    rule: "utm_email",
    channel: "email",
    source: "gmail",
  },
  {
    name: "sms medium",
    input: { utmSource: "attentive", utmMedium: "sms" },
    rule: "utm_sms",
    channel: "sms",
    source: "attentive",
  },
  {
    name: "text medium",
    input: { utmSource: "postscript", utmMedium: "text" },
    rule: "utm_sms",
    channel: "sms",
    source: "postscript",
  },
  {
    name: "affiliate medium",
    input: { utmSource: "awin", utmMedium: "affiliate" },
    rule: "utm_affiliate",
    channel: "affiliate",
    source: "awin",
  },
  {
    name: "partner medium",
    input: { utmSource: "impact", utmMedium: "partner" },
    rule: "utm_affiliate",
    channel: "affiliate",
    source: "impact",
  },
  {
    name: "referral medium",
    input: { utmSource: "blog.example.org", utmMedium: "referral" },
    rule: "utm_referral",
    channel: "referral",
    source: "blog.example.org",
  },
  // utm_source without medium
  {
    name: "source fb, no medium",
    input: { utmSource: "fb" },
    rule: "utm_social_source",
    channel: "organic_social",
    source: "facebook",
  },
  {
    name: "source m.facebook.com, no medium",
    input: { utmSource: "m.facebook.com" },
    rule: "utm_social_source",
    channel: "organic_social",
    source: "facebook",
  },
  {
    name: "source klaviyo, no medium",
    input: { utmSource: "klaviyo" },
    rule: "utm_email_source",
    channel: "email",
    source: "klaviyo",
  },
  {
    name: "source attentive, no medium",
    input: { utmSource: "attentive" },
    rule: "utm_sms_source",
    channel: "sms",
    source: "attentive",
  },
  {
    name: "unknown medium",
    input: { utmSource: "Podcast", utmMedium: "audio" },
    rule: "utm_other",
    channel: "other",
    source: "podcast",
  },
  {
    name: "only utm_campaign",
    input: { utmCampaign: "bf" },
    rule: "utm_other",
    channel: "other",
    source: "",
  },
  { name: "only utm_id", input: { utmId: "123" }, rule: "utm_other", channel: "other", source: "" },
  {
    name: "utm with an internal referrer is still a touch",
    input: { utmSource: "google", utmMedium: "cpc", referrerHost: "checkout.example.com" },
    rule: "utm_paid_search",
    channel: "paid_search",
    source: "google",
  },
  // referrer only
  {
    name: "gmail web",
    input: { referrerHost: "mail.google.com" },
    rule: "ref_mail",
    channel: "email",
    source: "gmail",
  },
  {
    name: "gmail app",
    input: { referrerHost: "com.google.android.gm" },
    rule: "ref_mail",
    channel: "email",
    source: "gmail",
  },
  {
    name: "outlook",
    input: { referrerHost: "outlook.live.com" },
    rule: "ref_mail",
    channel: "email",
    source: "outlook",
  },
  {
    name: "yahoo mail",
    input: { referrerHost: "mail.yahoo.com" },
    rule: "ref_mail",
    channel: "email",
    source: "yahoo",
  },
  {
    name: "google.com",
    input: { referrerHost: "google.com" },
    rule: "ref_search",
    channel: "organic_search",
    source: "google",
  },
  {
    name: "www.google.co.uk",
    input: { referrerHost: "www.google.co.uk" },
    rule: "ref_search",
    channel: "organic_search",
    source: "google",
  },
  {
    name: "google.com.au",
    input: { referrerHost: "google.com.au" },
    rule: "ref_search",
    channel: "organic_search",
    source: "google",
  },
  {
    name: "bing",
    input: { referrerHost: "bing.com" },
    rule: "ref_search",
    channel: "organic_search",
    source: "bing",
  },
  {
    name: "cn.bing.com",
    input: { referrerHost: "cn.bing.com" },
    rule: "ref_search",
    channel: "organic_search",
    source: "bing",
  },
  {
    name: "duckduckgo",
    input: { referrerHost: "duckduckgo.com" },
    rule: "ref_search",
    channel: "organic_search",
    source: "duckduckgo",
  },
  {
    name: "yahoo search",
    input: { referrerHost: "search.yahoo.co.jp" },
    rule: "ref_search",
    channel: "organic_search",
    source: "yahoo",
  },
  {
    name: "yandex",
    input: { referrerHost: "yandex.ru" },
    rule: "ref_search",
    channel: "organic_search",
    source: "yandex",
  },
  {
    name: "baidu",
    input: { referrerHost: "m.baidu.com" },
    rule: "ref_search",
    channel: "organic_search",
    source: "baidu",
  },
  {
    name: "ecosia",
    input: { referrerHost: "ecosia.org" },
    rule: "ref_search",
    channel: "organic_search",
    source: "ecosia",
  },
  {
    name: "facebook",
    input: { referrerHost: "facebook.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "facebook",
  },
  {
    name: "m.facebook.com",
    input: { referrerHost: "m.facebook.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "facebook",
  },
  {
    name: "l.facebook.com",
    input: { referrerHost: "l.facebook.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "facebook",
  },
  {
    name: "instagram is not facebook",
    input: { referrerHost: "instagram.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "instagram",
  },
  {
    name: "t.co",
    input: { referrerHost: "t.co" },
    rule: "ref_social",
    channel: "organic_social",
    source: "twitter",
  },
  {
    name: "x.com",
    input: { referrerHost: "x.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "twitter",
  },
  {
    name: "lnkd.in",
    input: { referrerHost: "lnkd.in" },
    rule: "ref_social",
    channel: "organic_social",
    source: "linkedin",
  },
  {
    name: "pinterest.de",
    input: { referrerHost: "pinterest.de" },
    rule: "ref_social",
    channel: "organic_social",
    source: "pinterest",
  },
  {
    name: "old.reddit.com",
    input: { referrerHost: "old.reddit.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "reddit",
  },
  {
    name: "tiktok",
    input: { referrerHost: "www.tiktok.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "tiktok",
  },
  {
    name: "youtube",
    input: { referrerHost: "m.youtube.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "youtube",
  },
  {
    name: "snapchat",
    input: { referrerHost: "snapchat.com" },
    rule: "ref_social",
    channel: "organic_social",
    source: "snapchat",
  },
  {
    name: "other site",
    input: { referrerHost: "www.Blog.Example.org" },
    rule: "ref_other",
    channel: "referral",
    source: "blog.example.org",
  },
  {
    name: "google subdomain that is not search",
    input: { referrerHost: "docs.google.com" },
    rule: "ref_other",
    channel: "referral",
    source: "docs.google.com",
  },
  {
    name: "lookalike of a search host",
    input: { referrerHost: "notgoogle.com" },
    rule: "ref_other",
    channel: "referral",
    source: "notgoogle.com",
  },
  {
    name: "another tenant of myshopify.com",
    input: { referrerHost: "other-store.myshopify.com", pageHost: "my-store.myshopify.com" },
    rule: "ref_other",
    channel: "referral",
    source: "other-store.myshopify.com",
  },
  {
    name: "same registrable name under another suffix is another site",
    input: { referrerHost: "example.co.uk", pageHost: "example.com" },
    rule: "ref_other",
    channel: "referral",
    source: "example.co.uk",
  },
  // direct
  { name: "nothing at all", input: {}, rule: "direct", channel: "direct", source: "", isTouch: false },
  {
    name: "same host referrer",
    input: { referrerHost: PAGE },
    rule: "direct",
    channel: "direct",
    source: "",
    isTouch: false,
  },
  {
    name: "www. variant of the same host",
    input: { referrerHost: "www.shop.example.com" },
    rule: "direct",
    channel: "direct",
    source: "",
    isTouch: false,
  },
  {
    name: "subdomain of the same site",
    input: { referrerHost: "checkout.example.com" },
    rule: "direct",
    channel: "direct",
    source: "",
    isTouch: false,
  },
  {
    name: "parent domain of the page",
    input: { referrerHost: "example.com" },
    rule: "direct",
    channel: "direct",
    source: "",
    isTouch: false,
  },
  {
    name: "same site under a two-level suffix",
    input: { referrerHost: "pay.shop.co.uk", pageHost: "www.shop.co.uk" },
    rule: "direct",
    channel: "direct",
    source: "",
    isTouch: false,
  },
];

describe("classifyTouch rule table", () => {
  it.each(CASES)("$name → $rule", (c) => {
    const input = touch(c.input);
    expect(matchRule(input).id).toBe(c.rule);
    expect(classifyTouch(input)).toEqual({
      channel: c.channel,
      source: c.source,
      isTouch: c.isTouch ?? true,
    });
  });

  it("exercises every rule in the table", () => {
    const covered = new Set(CASES.map((c) => c.rule));
    expect(CHANNEL_RULES.map((r) => r.id).filter((id) => !covered.has(id))).toEqual([]);
  });

  it("has unique rule ids, only known channels, and ends with a catch-all", () => {
    expect(new Set(CHANNEL_RULES.map((r) => r.id)).size).toBe(CHANNEL_RULES.length);
    for (const r of CHANNEL_RULES) expect(CHANNELS).toContain(r.channel);
    expect(CHANNEL_RULES.at(-1)?.id).toBe("direct");
  });
});

describe("normalizeSource", () => {
  it.each([
    ["fb", "facebook"],
    ["Facebook", "facebook"],
    ["facebook.com", "facebook"],
    ["m.facebook.com", "facebook"],
    ["Facebook Ads", "facebook"],
    ["ig", "instagram"],
    ["instagram", "instagram"],
    ["l.instagram.com", "instagram"],
    ["google.com", "google"],
    ["google.co.uk", "google"],
    ["www.google.de", "google"],
    ["Google-Ads", "google"],
    ["bing.com", "bing"],
    ["t.co", "twitter"],
    ["x.com", "twitter"],
    ["lnkd.in", "linkedin"],
    ["youtu.be", "youtube"],
    ["manage.kmail-lists.com", "manage.kmail-lists.com"],
    ["us1.list-manage.com", "mailchimp"],
    ["  Spring Newsletter  ", "spring newsletter"],
    ["", ""],
  ])("%j → %j", (raw, expected) => {
    expect(normalizeSource(raw)).toBe(expected);
  });
});

describe("isSameSite", () => {
  it.each([
    ["shop.com", "shop.com", true],
    ["WWW.Shop.com", "shop.com", true],
    ["checkout.shop.com", "shop.com", true],
    ["a.b.shop.com", "c.shop.com", true],
    ["shop.co.uk", "checkout.shop.co.uk", true],
    ["other.co.uk", "shop.co.uk", false],
    ["a.myshopify.com", "b.myshopify.com", false],
    ["203.0.113.1", "203.0.113.2", false],
    ["shop.com", "", false],
    ["", "shop.com", false],
  ])("%s vs %s → %s", (ref, page, expected) => {
    expect(isSameSite(ref, page)).toBe(expected);
  });
});

describe("docs/channels.md", () => {
  const doc = readFileSync(join(import.meta.dirname, "../../../docs/channels.md"), "utf8");
  const rows = doc.split("\n").filter((l) => l.startsWith("|"));
  const cells = (line: string): string[] =>
    line
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());

  it("lists the rule table in code order with the same conditions and channels", () => {
    const ruleRows = rows.map(cells).filter((c) => /^\d+$/.test(c[0] ?? ""));
    expect(ruleRows.map((c) => [Number(c[0]), c[1], c[2], c[3]])).toEqual(
      CHANNEL_RULES.map((r, i) => [i + 1, `\`${r.id}\``, r.when, r.channel]),
    );
  });

  it("lists every host pattern and alias with its source", () => {
    const table = new Map<string, string>();
    for (const c of rows.map(cells)) {
      const source = c[0] ?? "";
      for (const item of (c[1] ?? "").matchAll(/`([^`]+)`/g)) table.set(`${source} ${item[1]}`, "");
    }
    const expected = [
      ...[...MAIL_CLIENTS, ...SEARCH_ENGINES, ...SOCIAL_NETWORKS, ...OTHER_SOURCE_HOSTS].map(
        ([p, s]) => `${s} ${p}`,
      ),
      ...Object.entries(SOURCE_ALIASES).map(([alias, s]) => `${s} ${alias}`),
    ];
    for (const key of expected) expect(table.has(key), key).toBe(true);
  });

  it("names the social, email and SMS source sets", () => {
    const sentence = (label: string): string[] =>
      (new RegExp(`${label} \\(rules? [\\d, ]+\\): ([^.]+)\\.`).exec(doc.replace(/\n/g, " "))?.[1] ?? "")
        .split(",")
        .map((s) => s.trim());
    expect(sentence("Social networks")).toEqual([...SOCIAL_SOURCES]);
    expect(sentence("Email platforms")).toEqual([...EMAIL_SOURCES]);
    expect(sentence("SMS platforms")).toEqual([...SMS_SOURCES]);
  });
});
