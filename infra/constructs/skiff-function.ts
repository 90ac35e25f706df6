/**
 * `SkiffFunction`: every Skiff Lambda, with the defaults in one place — Node.js 22 on arm64, an ESM bundle built by
 * the local esbuild (no Docker, options in {@link skiffBundling}; no source map unless asked for), its own log group
 * with a retention, X-Ray active tracing, and an execution role that may write only to that log group (no managed
 * policies).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { METRIC_NAMESPACE, METRIC_SERVICE } from '../metric-names.js';
import { BUNDLE_ALIASES } from './bundle-aliases.js';

/** The repository root (entries, `package-lock.json`). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Lambda runtime of every function (docs/architecture.md#runtime: Node.js 22; the code also runs on the local Node 20). */
export const SKIFF_RUNTIME = lambda.Runtime.NODEJS_22_X;

/**
 * The banner of the ESM bundle: CommonJS dependencies bundled into an ES module still call `require` for Node
 * built-ins, which ES modules lack; esbuild's documented workaround defines it from `createRequire`.
 */
const REQUIRE_SHIM = "import { createRequire as __skiffCreateRequire } from 'node:module'; const require = __skiffCreateRequire(import.meta.url);";

/**
 * The esbuild options of every Skiff bundle (`NodejsFunction` `bundling`): ESM for Node.js 22, `module` before `main`
 * (ES builds tree-shake), minified with names kept (error class names, `this.name = new.target.name`, stay readable in
 * the logs), the `createRequire` banner, the pinned AWS SDK bundled instead of the runtime's copy (whose version moves
 * under us), {@link BUNDLE_ALIASES} (as `--alias:name=path`), the local esbuild (no Docker).
 *
 * Source maps: none by default. A map of a minified 1–5 MB bundle is 3–14 MB in the deployed package, and
 * `--enable-source-maps` makes Node.js load it when the first stack trace is printed. With `sourceMaps` the map is
 * written beside the bundle (`index.mjs.map`, in the asset) and the function runs with
 * `NODE_OPTIONS=--enable-source-maps` ({@link SkiffFunctionProps.sourceMaps}).
 * @param sourceMaps write a source map beside the bundle
 */
export function skiffBundling(sourceMaps: boolean): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    keepNames: true,
    sourceMap: sourceMaps,
    ...(sourceMaps ? { sourceMapMode: SourceMapMode.DEFAULT } : {}),
    banner: REQUIRE_SHIM,
    externalModules: [],
    // `--alias:name` keys: CDK passes a key it does not know as `key=value`, which is esbuild's `--alias:name=path`.
    esbuildArgs: Object.fromEntries(Object.entries(BUNDLE_ALIASES).map(([name, file]) => [`--alias:${name}`, file])),
    forceDockerBundling: false,
  };
}

/** Where a function runs in a VPC. */
export interface SkiffFunctionVpc {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.SubnetSelection;
  readonly securityGroups: readonly ec2.ISecurityGroup[];
}

/** Props of {@link SkiffFunction}. */
export interface SkiffFunctionProps {
  /** Entry file, relative to the repository root, e.g. `functions/provisioner/index.ts`; it exports `handler`. */
  readonly entry: string;
  readonly description: string;
  /** Execution role (shared by the controllers). @default a new role allowed only to write this function's logs */
  readonly role?: iam.IRole;
  /** Memory, MiB. @default 512 */
  readonly memorySize?: number;
  /** @default 30 seconds */
  readonly timeout?: Duration;
  /** @default none (unreserved) */
  readonly reservedConcurrentExecutions?: number;
  /** Extra environment variables (grants add their own). */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default one month */
  readonly logRetention?: logs.RetentionDays;
  /** @default not in a VPC */
  readonly vpc?: SkiffFunctionVpc;
  /**
   * Ship a source map in the asset and run with `NODE_OPTIONS=--enable-source-maps`, so stack traces in the logs name
   * TypeScript lines (the stack configuration's `sourceMaps`). Costs package size and the map's load on the first
   * stack trace. @default false
   */
  readonly sourceMaps?: boolean;
}

/**
 * One Skiff Lambda. Grant to it through {@link SkiffFunction.function} or use it as an `IGrantable`.
 * @example
 * const fn = new SkiffFunction(this, 'Provisioner', { entry: 'functions/provisioner/index.ts', description: '…' });
 * queue.grantConsumeMessages(fn);
 */
export class SkiffFunction extends Construct implements iam.IGrantable {
  readonly function: NodejsFunction;
  readonly role: iam.IRole;
  readonly logGroup: logs.LogGroup;
  readonly grantPrincipal: iam.IPrincipal;
  /** The esbuild options the bundle is built with ({@link skiffBundling}). */
  readonly bundling: BundlingOptions;

  constructor(scope: Construct, id: string, props: SkiffFunctionProps) {
    super(scope, id);
    this.role = props.role ?? new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description: `Execution role of ${props.description}` });
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.logGroup.grantWrite(this.role);
    this.bundling = skiffBundling(props.sourceMaps === true);
    this.function = new NodejsFunction(this, 'Function', {
      entry: `${REPO_ROOT}${props.entry}`,
      handler: 'handler',
      description: props.description,
      runtime: SKIFF_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(30),
      tracing: lambda.Tracing.ACTIVE,
      role: this.role,
      logGroup: this.logGroup,
      ...(props.reservedConcurrentExecutions !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
      ...(props.vpc ? { vpc: props.vpc.vpc, vpcSubnets: props.vpc.subnets, securityGroups: [...props.vpc.securityGroups] } : {}),
      projectRoot: REPO_ROOT,
      depsLockFilePath: `${REPO_ROOT}package-lock.json`,
      environment: {
        ...(props.sourceMaps === true ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        POWERTOOLS_SERVICE_NAME: METRIC_SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
        ...props.environment,
      },
      bundling: this.bundling,
    });
    this.grantPrincipal = this.function.grantPrincipal;
    const runtime = `Skiff pins the Lambda runtime to ${SKIFF_RUNTIME.name} (docs/architecture.md#runtime; tested on Node 20 and 22); move to a newer runtime together with the toolchain.`;
    Validations.of(this.function).acknowledge({ id: 'AwsSolutions-L1', reason: runtime }, { id: 'Serverless-LambdaLatestVersion', reason: runtime });
    // Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions.
    Validations.of(this.role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: 'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support no resource-level permissions' });
  }

  /**
   * Records that the function is only ever invoked synchronously (a Function URL, an SQS event source mapping), so
   * an asynchronous dead-letter target would never receive anything.
   * @param how what invokes it, for the acknowledgement's reason
   */
  acknowledgeSynchronousOnly(how: string): void {
    Validations.of(this.function).acknowledge({ id: 'Serverless-LambdaDLQ', reason: `Invoked synchronously only (${how}); a dead-letter target applies to asynchronous invocations.` });
  }

  /** Sets an environment variable (grants call it, so a permission and its variable come together). */
  addEnvironment(name: string, value: string): this {
    this.function.addEnvironment(name, value);
    return this;
  }
}
