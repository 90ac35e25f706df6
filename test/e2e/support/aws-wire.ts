/**
 * Both sides of AWS's wire protocols, for local endpoints that the real SDK clients talk to: requests are read and
 * responses written from the SDK's own operation schemas (`@aws-sdk/client-*` `…$` schemas, Smithy traits
 * `ec2QueryName` and `xmlName`), so a field the SDK sends or expects under another name than a hand-written server
 * assumed cannot go unnoticed.
 *
 * - EC2 Query (`Action=…&Version=2016-11-15`, flattened lists `Name.N`, keys from `ec2QueryName`) → XML response
 *   `<ActionResponse><requestId/>…</ActionResponse>`, errors `<Response><Errors><Error><Code/><Message/>`.
 * - AWS Query (IAM: `Name.member.N`) → `<ActionResponse><ActionResult>…</ActionResult><ResponseMetadata/>`, errors
 *   `<ErrorResponse><Error><Type/><Code/><Message/></Error>`.
 * - AWS JSON 1.1 (SSM, Pricing, EventBridge, Secrets Manager: `X-Amz-Target: <prefix>.<Action>`) → JSON, errors
 *   `{"__type": code, "message": …}` with HTTP 400.
 */
import { XmlShapeSerializer } from '@aws-sdk/core/protocols';
import { NormalizedSchema } from '@smithy/core/schema';

/** An operation schema as the SDK exports it (`CreateFleet$`: `[9, namespace, name, traits, input, output]`). */
type OperationSchema = readonly unknown[];

/** A failure the endpoint answers with the service's error shape. */
export class AwsWireError extends Error {
  /**
   * @param code the service's error code, e.g. `InvalidLaunchTemplateName.NotFoundException`
   * @param status HTTP status @default 400
   */
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const resolve = (s: unknown): unknown => (typeof s === 'function' ? (s as () => unknown)() : s);

/** The input and output schemas of `Action` in an SDK module (`import * as ec2 from '@aws-sdk/client-ec2'`). */
export function operationSchemas(sdk: Record<string, unknown>, action: string): { readonly input: unknown; readonly output: unknown } | undefined {
  const op = sdk[`${action}$`] as OperationSchema | undefined;
  if (!Array.isArray(op) || op[0] !== 9) return undefined;
  return { input: resolve(op[4]), output: resolve(op[5]) };
}

/**
 * Reads a Query-protocol request body into the SDK's input shape (the inverse of `@aws-sdk/core`'s
 * `QueryShapeSerializer`).
 * @param ec2 EC2's variant: keys from `ec2QueryName` or the capitalised member name, lists flattened (`Name.1`);
 *   otherwise AWS Query's `Name.member.1`
 */
export function readQuery(schema: unknown, params: URLSearchParams, ec2: boolean): Record<string, unknown> {
  const keys = [...params.keys()];
  const has = (prefix: string) => keys.some((k) => k === prefix || k.startsWith(`${prefix}.`));
  const read = (s: unknown, prefix: string): unknown => {
    const ns = NormalizedSchema.of(s as never);
    if (ns.isListSchema()) {
      const member = ns.getValueSchema();
      const flat = ec2 || Boolean(ns.getMergedTraits().xmlFlattened);
      const memberName = member.getMergedTraits().xmlName;
      const base = flat ? prefix : `${prefix}.${typeof memberName === 'string' ? memberName : 'member'}`;
      const out: unknown[] = [];
      for (let i = 1; has(`${base}.${i}`); i++) out.push(read(member, `${base}.${i}`));
      return out.length > 0 ? out : undefined;
    }
    if (ns.isStructSchema()) {
      const out: Record<string, unknown> = {};
      for (const [name, member] of ns.structIterator()) {
        const t = member.getMergedTraits();
        const xmlName = typeof t.xmlName === 'string' ? t.xmlName : undefined;
        const ec2Name = typeof t.ec2QueryName === 'string' ? t.ec2QueryName : undefined;
        const key = ec2 ? (ec2Name ?? capitalise(xmlName ?? name)) : (xmlName ?? name);
        const value = read(member, prefix === '' ? key : `${prefix}.${key}`);
        if (value !== undefined) out[name] = value;
      }
      return prefix === '' || Object.keys(out).length > 0 ? out : undefined;
    }
    const raw = params.get(prefix);
    if (raw === null) return undefined;
    if (ns.isBooleanSchema()) return raw === 'true';
    if (ns.isNumericSchema()) return Number(raw);
    if (ns.isTimestampSchema()) return new Date(raw);
    if (ns.isBlobSchema()) return Buffer.from(raw, 'base64');
    return raw;
  };
  return read(schema, '') as Record<string, unknown>;
}

const capitalise = (s: string) => (s === '' ? s : s[0]!.toUpperCase() + s.slice(1));

/** The members of an output shape as XML elements (the shape's own wrapper element dropped). */
export function xmlMembers(schema: unknown, value: unknown): string {
  const serializer = new XmlShapeSerializer({ serviceNamespace: '', timestampFormat: { useTrait: true, default: 5 } } as never);
  serializer.write(schema as never, value);
  const xml = String(serializer.flush());
  const open = /^<([\w:.-]+)(\s[^>]*)?>/.exec(xml);
  if (!open) return ''; // an empty shape serialises as `<Name/>`
  return xml.slice(open[0].length, xml.length - `</${open[1]}>`.length);
}

/** An EC2 Query response body. */
export function ec2Response(action: string, outputSchema: unknown, value: unknown, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>${requestId}</requestId>${xmlMembers(outputSchema, value)}</${action}Response>`;
}

/** An EC2 error body. */
export function ec2ErrorBody(code: string, message: string, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`;
}

/** An AWS Query (IAM) response body. */
export function queryResponse(action: string, namespace: string, outputSchema: unknown, value: unknown, requestId: string): string {
  return `<${action}Response xmlns="${namespace}"><${action}Result>${xmlMembers(outputSchema, value)}</${action}Result><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`;
}

/** An AWS Query (IAM) error body. */
export function queryErrorBody(namespace: string, code: string, message: string, requestId: string): string {
  return `<ErrorResponse xmlns="${namespace}"><Error><Type>Sender</Type><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
}

/** `&`, `<`, `>`, `"`, `'` escaped for XML text. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}
