import { z } from "zod";
import { route } from "../http/route.js";
import { actorOf, type Principal } from "../keys/service.js";
import {
  cogBody,
  cogParams,
  cogUpdateBody,
  costQuery,
  handlingFeeBody,
  productVariantSchema,
  resolvedCostSchema,
  searchQuery,
  searchResponse,
  variantParams,
  variantSummarySchema,
} from "./schemas.js";
import type { ProductService, VariantRef } from "./service.js";

const refOf = (p: Principal, params: { productId: string; variantId: string }): VariantRef => ({
  accountId: p.accountId,
  pixelId: p.pixelId,
  productId: params.productId,
  variantId: params.variantId,
});

const variantResponse = z.object({ variant: variantSummarySchema });
const NOT_FOUND = { "404": "No such variant (or COG line) in the key's pixel" };
const RECALC = "Writes a `costs.changed` outbox row in the same transaction (per-order COGS recalculation).";

export function productRoutes(products: ProductService) {
  return [
    route({
      method: "get",
      path: "/accounts/api/products/search",
      auth: "costs:read",
      tag: "Products",
      summary: "Search the catalog by product title, variant title or SKU (cursor-paginated)",
      description:
        "Case-insensitive substring match. Items are products in a stable order; pass `nextCursor` back as " +
        "`cursor` with the same `q` for the next page (absent on the last page). Rows added while paging " +
        "cause no duplicate and no gap. Docs: docs/products.md.",
      query: searchQuery,
      response: searchResponse,
      handler: ({ principal, query }) => products.search(principal.pixelId, query),
    }),
    route({
      method: "get",
      path: "/accounts/api/products/:productId/:variantId/cost",
      auth: "costs:read",
      tag: "Products",
      summary: "A variant's stored cost record (Form A) or its resolved cost (Form B, ?resolved=true)",
      description:
        "Form A `{productCost: ProductVariant|null}`. With `resolved=true`, Form B: the cost in force today in " +
        "the account timezone (or on `at`), from the first tier that has one: `variant_cog`, `store_cost`, " +
        "`global_override`, `default`. An unknown variant answers 200 with `productCost: null` in both forms.",
      params: variantParams,
      query: costQuery,
      response: z.object({ productCost: z.union([productVariantSchema, resolvedCostSchema]).nullable() }),
      handler: async ({ principal, params, query }) => ({
        productCost:
          query.resolved === "true"
            ? await products.resolvedCost(refOf(principal, params), query.at)
            : await products.variantRecord(refOf(principal, params)),
      }),
    }),
    route({
      method: "post",
      path: "/accounts/api/products/:productId/:variantId/cogs",
      auth: "costs:write",
      tag: "Products",
      summary: "Append a COG line to the variant's manual cost history",
      description:
        "`cost` ≥ 0 (account currency) and `effectiveStartDate` are required; `effectiveEndDate` null or " +
        "absent = open-ended. A new open-ended line closes the open-ended line that started before it " +
        "(its end becomes the day before). Where lines overlap, the latest start wins. " +
        RECALC,
      params: variantParams,
      body: cogBody,
      response: variantResponse,
      responses: NOT_FOUND,
      handler: async ({ principal, params, body }) => ({
        variant: await products.addCog(refOf(principal, params), body, actorOf(principal)),
      }),
    }),
    route({
      method: "put",
      path: "/accounts/api/products/:productId/:variantId/cogs/:cogId",
      auth: "costs:write",
      tag: "Products",
      summary: "Change the supplied fields of a manual COG line",
      description: `Omitted fields stay; a line that would end before it starts is refused (400). ${RECALC}`,
      params: cogParams,
      body: cogUpdateBody,
      response: variantResponse,
      responses: NOT_FOUND,
      handler: async ({ principal, params, body }) => ({
        variant: await products.updateCog(refOf(principal, params), params.cogId, body, actorOf(principal)),
      }),
    }),
    route({
      method: "put",
      path: "/accounts/api/products/:productId/:variantId/handling-fee",
      auth: "costs:write",
      tag: "Products",
      summary: "Set the variant's per-unit handling fee (≥ 0, account currency)",
      description: `The fee is undated: it applies to every order of the variant. ${RECALC}`,
      params: variantParams,
      body: handlingFeeBody,
      response: variantResponse,
      responses: NOT_FOUND,
      handler: async ({ principal, params, body }) => ({
        variant: await products.setHandlingFee(
          refOf(principal, params),
          body.handlingFee,
          actorOf(principal),
        ),
      }),
    }),
  ];
}
