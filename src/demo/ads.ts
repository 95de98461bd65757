import type { AdEntityRecord, AdMetricsRecord } from "../sync/schemas.js";
import type { Random } from "./random.js";

export interface DemoAd {
  platform: "facebook" | "google" | "tiktok";
  accountId: string;
  campaignId: string;
  adsetId: string;
  adId: string;
  campaignName: string;
}

const PLATFORMS = [
  {
    platform: "facebook",
    currency: "USD",
    campaigns: ["Prospecting — Spring", "Retargeting — Cart", "Lookalike 2%"],
  },
  { platform: "google", currency: "EUR", campaigns: ["Brand — Search", "Shopping — All", "Performance Max"] },
  { platform: "tiktok", currency: "GBP", campaigns: ["Spark Ads — Creators", "TopView — Launch"] },
] as const;

/** Three ad platforms, each an account with campaigns, ad sets and ads, plus daily ad metrics. */
export function makeAds(
  rng: Random,
  days: readonly string[],
  asOf: Date,
): { entities: AdEntityRecord[]; metrics: AdMetricsRecord[]; ads: DemoAd[] } {
  const entities: AdEntityRecord[] = [];
  const metrics: AdMetricsRecord[] = [];
  const ads: DemoAd[] = [];
  const created = new Date(asOf.getTime() - 400 * 86_400_000).toISOString();
  const updated = asOf.toISOString();
  for (const p of PLATFORMS) {
    const accountId = `${p.platform}-act-${rng.int(100000, 999999)}`;
    const base = {
      platform: p.platform,
      accountId,
      currency: p.currency,
      sourceCreatedAt: created,
      sourceUpdatedAt: updated,
    };
    entities.push({
      ...base,
      level: "account",
      id: accountId,
      name: `Demo Store (${p.platform})`,
      status: "ACTIVE",
    });
    p.campaigns.forEach((campaignName, c) => {
      const campaignId = `${p.platform}-cmp-${c + 1}`;
      const dailyBudget = rng.int(40, 250);
      entities.push({
        ...base,
        level: "campaign",
        id: campaignId,
        name: campaignName,
        status: c === p.campaigns.length - 1 && rng.chance(0.5) ? "PAUSED" : "ACTIVE",
        dailyBudget,
        budgetRemaining: Math.round(dailyBudget * rng.next() * 100) / 100,
        amountSpent: 0,
      });
      for (let s = 0; s < 2; s++) {
        const adsetId = `${campaignId}-set-${s + 1}`;
        entities.push({
          ...base,
          level: "adset",
          id: adsetId,
          campaignId,
          name: `${campaignName} / ${s ? "Broad" : "Interests"}`,
          status: "ACTIVE",
        });
        for (let a = 0; a < 2; a++) {
          const adId = `${adsetId}-ad-${a + 1}`;
          entities.push({
            ...base,
            level: "ad",
            id: adId,
            campaignId,
            adsetId,
            name: `Creative ${String.fromCharCode(65 + a)}`,
            status: "ACTIVE",
          });
          ads.push({ platform: p.platform, accountId, campaignId, adsetId, adId, campaignName });
          for (const date of days) {
            const spend = Math.round(dailyBudget * (0.1 + rng.next() * 0.2) * 100) / 100;
            const impressions = Math.round(spend * rng.int(60, 140));
            const clicks = Math.round(impressions * (0.008 + rng.next() * 0.02));
            const conversions = rng.int(0, Math.max(1, Math.round(clicks / 40)));
            metrics.push({
              platform: p.platform,
              level: "ad",
              entityId: adId,
              accountId,
              campaignId,
              adsetId,
              date,
              currency: p.currency,
              spend,
              impressions,
              clicks,
              conversions,
              conversionValue: Math.round(conversions * rng.int(40, 120) * 100) / 100,
              updatedAt: updated,
            });
          }
        }
      }
    });
  }
  return { entities, metrics, ads };
}
