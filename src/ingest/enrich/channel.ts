/**
 * Channel classification of a touch. The rules are data (CHANNEL_RULES), evaluated in order, first
 * match wins; docs/channels.md describes the same table and a test keeps the two in step.
 */
import { isIP } from "node:net";
import { normalizeHost } from "./url.js";

export const CHANNELS = [
  "paid_social",
  "paid_search",
  "organic_search",
  "organic_social",
  "email",
  "sms",
  "affiliate",
  "referral",
  "direct",
  "other",
] as const;
export type Channel = (typeof CHANNELS)[number];

export interface TouchInput {
  utmSource: string;
  utmMedium: string;
  utmCampaign: string;
  /** The remaining UTM fields only matter for isTouch: any UTM field marks a campaign landing. */
  utmTerm?: string;
  utmContent?: string;
  utmId?: string;
  clickIds: Readonly<Record<string, string>>;
  referrerHost: string;
  pageHost: string;
}

export interface TouchClassification {
  channel: Channel;
  source: string;
  isTouch: boolean;
}

/** What the rules read, derived once per touch. */
export interface TouchFacts {
  /** utm_medium lower-cased, runs of spaces/hyphens turned into `_` (`E-Mail` → `e_mail`). */
  medium: string;
  /** normalizeSource(utm_source), '' when absent. */
  utmSource: string;
  hasUtm: boolean;
  /** Lower-cased names of click ids that carry a value. */
  clickIds: ReadonlySet<string>;
  /** Referrer host when it is another site, else ''. */
  referrer: string;
  /** normalizeSource(referrer), '' when there is no external referrer. */
  referrerSource: string;
}

export interface ChannelRule {
  id: string;
  channel: Channel;
  /** The condition in words, as docs/channels.md states it. */
  when: string;
  matches(f: TouchFacts): boolean;
  source(f: TouchFacts): string;
}

// ---- Host patterns -------------------------------------------------------------------------------
// `a.com` is that exact host; `*.a.com` is a.com or any subdomain; `brand.*` is brand under any
// country/generic suffix (google.de, google.co.uk) — written as patterns so the docs can quote them.

const SUFFIX = "(?:[a-z]{2,63}|(?:co|com|net|org|ac|gov|edu|ne|or|go)\\.[a-z]{2})";

function compilePattern(pattern: string): RegExp {
  let body = pattern;
  let prefix = "";
  let suffix = "";
  if (body.startsWith("*.")) {
    prefix = "(?:[a-z0-9-]+\\.)*";
    body = body.slice(2);
  }
  if (body.endsWith(".*")) {
    suffix = `\\.${SUFFIX}`;
    body = body.slice(0, -2);
  }
  return new RegExp(`^${prefix}${body.replaceAll(".", "\\.")}${suffix}$`);
}

type HostList = readonly (readonly [pattern: string, source: string])[];

function hostLookup(list: HostList): (host: string) => string {
  const compiled = list.map(([p, s]) => [compilePattern(p), s] as const);
  return (host) => {
    if (!host) return "";
    for (const [re, source] of compiled) if (re.test(host)) return source;
    return "";
  };
}

/** Webmail referrers. Checked before search engines because mail.google.com is a google host. */
export const MAIL_CLIENTS: HostList = [
  ["mail.google.com", "gmail"],
  ["com.google.android.gm", "gmail"], // Gmail app (android-app:// referrer)
  ["outlook.live.com", "outlook"],
  ["outlook.office.com", "outlook"],
  ["outlook.office365.com", "outlook"],
  ["*.mail.yahoo.*", "yahoo"],
  ["mail.aol.com", "aol"],
  ["mail.proton.me", "proton"],
  ["*.mail.yandex.*", "yandex"],
];

/** Only the bare google.<suffix> host: other google subdomains (docs, news) are not search results. */
export const SEARCH_ENGINES: HostList = [
  ["google.*", "google"],
  ["com.google.android.googlequicksearchbox", "google"], // Google app
  ["*.bing.com", "bing"],
  ["*.duckduckgo.com", "duckduckgo"],
  ["*.yahoo.*", "yahoo"],
  ["*.yandex.*", "yandex"],
  ["ya.ru", "yandex"],
  ["*.baidu.com", "baidu"],
  ["*.ecosia.org", "ecosia"],
];

export const SOCIAL_NETWORKS: HostList = [
  ["*.facebook.com", "facebook"], // includes m., l., lm. (Meta's link shim)
  ["com.facebook.katana", "facebook"], // Facebook app
  ["*.instagram.com", "instagram"],
  ["com.instagram.android", "instagram"],
  ["t.co", "twitter"],
  ["*.twitter.com", "twitter"],
  ["*.x.com", "twitter"],
  ["*.linkedin.com", "linkedin"],
  ["lnkd.in", "linkedin"],
  ["*.pinterest.*", "pinterest"],
  ["pin.it", "pinterest"],
  ["*.reddit.com", "reddit"],
  ["*.tiktok.com", "tiktok"],
  ["*.youtube.com", "youtube"],
  ["youtu.be", "youtube"],
  ["*.snapchat.com", "snapchat"],
];

/** Hosts that only matter for normalizing a host-shaped utm_source. */
export const OTHER_SOURCE_HOSTS: HostList = [
  ["*.klaviyo.com", "klaviyo"],
  ["*.mailchimp.com", "mailchimp"],
  ["*.list-manage.com", "mailchimp"], // Mailchimp's click-tracking domain
];

const mailClient = hostLookup(MAIL_CLIENTS);
const searchEngine = hostLookup(SEARCH_ENGINES);
const socialNetwork = hostLookup(SOCIAL_NETWORKS);
const knownHost = hostLookup([...MAIL_CLIENTS, ...SEARCH_ENGINES, ...SOCIAL_NETWORKS, ...OTHER_SOURCE_HOSTS]);

// ---- Source normalization ------------------------------------------------------------------------

/** Spellings seen in utm_source (keys lower-cased, spaces/hyphens as `_`) → canonical source. */
export const SOURCE_ALIASES: Readonly<Record<string, string>> = {
  fb: "facebook",
  facebook: "facebook",
  facebook_ads: "facebook",
  facebookads: "facebook",
  meta: "facebook",
  ig: "instagram", // Meta's {{site_source_name}} values: fb, ig, msg, an
  instagram: "instagram",
  msg: "messenger",
  messenger: "messenger",
  an: "audience_network",
  audience_network: "audience_network",
  google: "google",
  google_ads: "google",
  googleads: "google",
  adwords: "google",
  bing: "bing",
  bing_ads: "bing",
  microsoft: "bing",
  microsoft_ads: "bing",
  tiktok: "tiktok",
  tiktok_ads: "tiktok",
  twitter: "twitter",
  x: "twitter",
  linkedin: "linkedin",
  pinterest: "pinterest",
  snapchat: "snapchat",
  snap: "snapchat",
  reddit: "reddit",
  youtube: "youtube",
  yt: "youtube",
  duckduckgo: "duckduckgo",
  ddg: "duckduckgo",
  yahoo: "yahoo",
  yandex: "yandex",
  baidu: "baidu",
  ecosia: "ecosia",
  gmail: "gmail",
  outlook: "outlook",
  klaviyo: "klaviyo",
  mailchimp: "mailchimp",
  omnisend: "omnisend",
  attentive: "attentive",
  postscript: "postscript",
};

export const SOCIAL_SOURCES: ReadonlySet<string> = new Set([
  "facebook",
  "instagram",
  "messenger",
  "audience_network",
  "twitter",
  "linkedin",
  "pinterest",
  "snapchat",
  "reddit",
  "tiktok",
  "youtube",
]);
export const EMAIL_SOURCES: ReadonlySet<string> = new Set([
  "klaviyo",
  "mailchimp",
  "omnisend",
  "gmail",
  "outlook",
]);
export const SMS_SOURCES: ReadonlySet<string> = new Set(["attentive", "postscript"]);

/** Meta runs ads on all of these under one click id (fbclid). */
const META_SOURCES: ReadonlySet<string> = new Set(["facebook", "instagram", "messenger", "audience_network"]);

const token = (s: string): string =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_");

/** Canonical source for a utm_source value or host; unknown values come back lower-cased. */
export function normalizeSource(raw: string): string {
  const lower = raw.trim().toLowerCase();
  if (!lower) return "";
  const alias = SOURCE_ALIASES[token(lower)];
  if (alias) return alias;
  const host = normalizeHost(lower);
  return knownHost(host) || host;
}

// ---- Same-site test ------------------------------------------------------------------------------

// Without the public suffix list: two-letter ccTLDs under these labels are registry suffixes
// (co.uk, com.au), and hosting platforms give each tenant its own site (a.myshopify.com ≠ b.…).
const SECOND_LEVEL = new Set(["co", "com", "net", "org", "ac", "gov", "edu", "ne", "or", "go", "gob"]);
const SHARED_HOSTING = new Set([
  "myshopify.com",
  "github.io",
  "vercel.app",
  "netlify.app",
  "pages.dev",
  "herokuapp.com",
]);

function siteOf(host: string): string {
  if (isIP(host) || host.startsWith("[")) return host;
  const labels = host.split(".");
  const lastTwo = labels.slice(-2).join(".");
  const tld = labels.at(-1) ?? "";
  const sld = labels.at(-2) ?? "";
  const keep = SHARED_HOSTING.has(lastTwo) || (tld.length === 2 && SECOND_LEVEL.has(sld)) ? 3 : 2;
  return labels.slice(-keep).join(".");
}

/** Navigation inside the shop (incl. shop ↔ checkout subdomain) says nothing about acquisition. */
export function isSameSite(referrerHost: string, pageHost: string): boolean {
  const ref = normalizeHost(referrerHost);
  const page = normalizeHost(pageHost);
  if (!ref || !page) return false;
  return ref === page || siteOf(ref) === siteOf(page);
}

// ---- The rule table ------------------------------------------------------------------------------

const PAID_MEDIUMS = new Set(["cpc", "ppc", "paid", "paidsearch", "paid_search", "sem"]);
// Impression-bought media only count as a channel we track when bought on a social network.
const DISPLAY_MEDIUMS = new Set(["cpm", "cpv", "display"]);
const PAID_SOCIAL_MEDIUMS = new Set(["paid_social", "paidsocial", "social_paid", "socialpaid", "social_ads"]);
const ORGANIC_SOCIAL_MEDIUMS = new Set(["social", "social_network", "social_media", "sm", "organic_social"]);
const EMAIL_MEDIUMS = new Set(["email", "e_mail", "newsletter"]);
const SMS_MEDIUMS = new Set(["sms", "text"]);
const AFFILIATE_MEDIUMS = new Set(["affiliate", "affiliates", "partner", "partners"]);
const ORGANIC_SEARCH_MEDIUMS = new Set(["organic"]);
const REFERRAL_MEDIUMS = new Set(["referral"]);

const utmSourceOrReferrer = (f: TouchFacts): string => f.utmSource || f.referrerSource;

function clickRule(id: string, names: readonly string[], channel: Channel, source: string): ChannelRule {
  return {
    id,
    channel,
    when: `click id ${names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names[0]} present`,
    matches: (f) => names.some((n) => f.clickIds.has(n)),
    source: () => source,
  };
}

const list = (values: ReadonlySet<string>): string => [...values].join(", ");

function mediumRule(id: string, channel: Channel, mediums: ReadonlySet<string>): ChannelRule {
  const when = mediums.size === 1 ? `utm_medium is ${list(mediums)}` : `utm_medium in ${list(mediums)}`;
  return { id, channel, when, matches: (f) => mediums.has(f.medium), source: utmSourceOrReferrer };
}

export const CHANNEL_RULES: readonly ChannelRule[] = [
  // Click ids first: they are set by the ad platform itself, so they beat hand-written UTM tags.
  // Social ids lead because Meta/TikTok append theirs to any shared URL, so a URL carrying both a
  // gclid and an fbclid was clicked last on the social network.
  {
    ...clickRule("click_fbclid", ["fbclid"], "paid_social", "facebook"),
    when: "click id fbclid present (source instagram/messenger/audience_network when utm_source or referrer says so)",
    source: (f) => {
      const hint = utmSourceOrReferrer(f);
      return META_SOURCES.has(hint) ? hint : "facebook";
    },
  },
  clickRule("click_ttclid", ["ttclid"], "paid_social", "tiktok"),
  clickRule("click_twclid", ["twclid"], "paid_social", "twitter"),
  clickRule("click_li_fat_id", ["li_fat_id"], "paid_social", "linkedin"),
  clickRule("click_sccid", ["sccid"], "paid_social", "snapchat"),
  clickRule("click_epik", ["epik"], "paid_social", "pinterest"),
  clickRule("click_google", ["gclid", "gbraid", "wbraid", "dclid"], "paid_search", "google"),
  clickRule("click_msclkid", ["msclkid"], "paid_search", "bing"),
  {
    id: "utm_paid_social_source",
    channel: "paid_social",
    when: `utm_medium in ${list(PAID_MEDIUMS)}, ${list(DISPLAY_MEDIUMS)} and utm_source is a social network`,
    matches: (f) =>
      (PAID_MEDIUMS.has(f.medium) || DISPLAY_MEDIUMS.has(f.medium)) && SOCIAL_SOURCES.has(f.utmSource),
    source: utmSourceOrReferrer,
  },
  mediumRule("utm_paid_search", "paid_search", PAID_MEDIUMS),
  mediumRule("utm_paid_social", "paid_social", PAID_SOCIAL_MEDIUMS),
  mediumRule("utm_organic_social", "organic_social", ORGANIC_SOCIAL_MEDIUMS),
  mediumRule("utm_organic_search", "organic_search", ORGANIC_SEARCH_MEDIUMS),
  mediumRule("utm_email", "email", EMAIL_MEDIUMS),
  mediumRule("utm_sms", "sms", SMS_MEDIUMS),
  mediumRule("utm_affiliate", "affiliate", AFFILIATE_MEDIUMS),
  mediumRule("utm_referral", "referral", REFERRAL_MEDIUMS),
  // A missing medium is not an unknown one: the source alone still names the channel.
  {
    id: "utm_social_source",
    channel: "organic_social",
    when: "no utm_medium and utm_source is a social network",
    matches: (f) => f.medium === "" && SOCIAL_SOURCES.has(f.utmSource),
    source: utmSourceOrReferrer,
  },
  {
    id: "utm_email_source",
    channel: "email",
    when: "no utm_medium and utm_source is an email platform",
    matches: (f) => f.medium === "" && EMAIL_SOURCES.has(f.utmSource),
    source: utmSourceOrReferrer,
  },
  {
    id: "utm_sms_source",
    channel: "sms",
    when: "no utm_medium and utm_source is an SMS platform",
    matches: (f) => f.medium === "" && SMS_SOURCES.has(f.utmSource),
    source: utmSourceOrReferrer,
  },
  {
    id: "utm_other",
    channel: "other",
    when: "any other UTM parameter present",
    matches: (f) => f.hasUtm,
    source: utmSourceOrReferrer,
  },
  // From here on there is no UTM and no click id: only the referrer is left to go by.
  {
    id: "ref_mail",
    channel: "email",
    when: "external referrer is a webmail client",
    matches: (f) => mailClient(f.referrer) !== "",
    source: (f) => mailClient(f.referrer),
  },
  {
    id: "ref_search",
    channel: "organic_search",
    when: "external referrer is a search engine",
    matches: (f) => searchEngine(f.referrer) !== "",
    source: (f) => searchEngine(f.referrer),
  },
  {
    id: "ref_social",
    channel: "organic_social",
    when: "external referrer is a social network",
    matches: (f) => socialNetwork(f.referrer) !== "",
    source: (f) => socialNetwork(f.referrer),
  },
  {
    id: "ref_other",
    channel: "referral",
    when: "any other external referrer",
    matches: (f) => f.referrer !== "",
    source: (f) => f.referrer,
  },
  {
    id: "direct",
    channel: "direct",
    when: "nothing above: no UTM, no click id, no referrer or a same-site one",
    matches: () => true,
    source: () => "",
  },
];

export function touchFacts(input: TouchInput): TouchFacts {
  const utm = [
    input.utmSource,
    input.utmMedium,
    input.utmCampaign,
    input.utmTerm,
    input.utmContent,
    input.utmId,
  ];
  const clickIds = new Set<string>();
  for (const [name, value] of Object.entries(input.clickIds)) {
    if (value.trim()) clickIds.add(name.toLowerCase());
  }
  const ref = normalizeHost(input.referrerHost);
  const referrer = ref && !isSameSite(ref, input.pageHost) ? ref : "";
  return {
    medium: token(input.utmMedium),
    utmSource: normalizeSource(input.utmSource),
    hasUtm: utm.some((v) => (v ?? "").trim() !== ""),
    clickIds,
    referrer,
    referrerSource: referrer ? normalizeSource(referrer) : "",
  };
}

// The last rule matches everything, so find() cannot miss.
const ruleFor = (facts: TouchFacts): ChannelRule =>
  CHANNEL_RULES.find((r) => r.matches(facts)) ?? CHANNEL_RULES[CHANNEL_RULES.length - 1]!;

/** The rule that decides a touch; exported so tests can assert which row of the table fired. */
export function matchRule(input: TouchInput): ChannelRule {
  return ruleFor(touchFacts(input));
}

export function classifyTouch(input: TouchInput): TouchClassification {
  const facts = touchFacts(input);
  const rule = ruleFor(facts);
  return {
    channel: rule.channel,
    source: rule.source(facts),
    isTouch: facts.hasUtm || facts.clickIds.size > 0 || facts.referrer !== "",
  };
}
