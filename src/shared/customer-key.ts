/**
 * The customer an order counts for in every query and rollup: the store's customer id, else the
 * email hash, else the order itself (a guest without an email is a customer of one order). Not the
 * identity graph's id, so a merge of identities never moves an order between customers.
 */
export function customerKeySql(order: string): string {
  return `if(${order}.customer_id != '', concat('c:', ${order}.customer_id), if(${order}.customer_email_hash != '', concat('e:', ${order}.customer_email_hash), concat('o:', ${order}.order_id)))`;
}
