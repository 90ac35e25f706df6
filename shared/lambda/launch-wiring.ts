/**
 * The launch templates of the functions that launch — provisioner, disruption (replacements), interruption (the pass
 * after a drain) — for `shared/lambda/wiring.ts`'s builders. A module of its own so that the lifecycle function, which
 * never launches, does not import it: with it come the SSM and IAM clients and the user-data code with `yaml` and
 * `smol-toml` (docs/architecture.md#lambda-bundles; `test/architecture/lambda-bundles.test.ts` checks the lifecycle
 * bundle holds none of them).
 */
import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { Ec2LaunchTemplates } from '../adapters/aws/launch-templates.js';
import type { LaunchTemplatesFor } from './wiring.js';

/**
 * Launch templates from the EC2NodeClass: AMIs (the SSM parameters of aliases), instance profiles (IAM), user data
 * (nodeadm YAML, Bottlerocket TOML), in the settings' region for the settings' cluster. Creates clients only (no
 * network call).
 */
export const ec2LaunchTemplates: LaunchTemplatesFor = (settings, ec2, clock) =>
  new Ec2LaunchTemplates({
    ec2,
    ssm: new SSMClient({ region: settings.region }),
    iam: new IAMClient({ region: settings.region }),
    region: settings.region,
    cluster: {
      name: settings.cluster,
      endpoint: settings.endpoint,
      certificateAuthority: settings.certificateAuthority,
      version: settings.kubernetesVersion,
      ...(settings.serviceCidr ? { serviceCidr: settings.serviceCidr } : {}),
    },
    clock,
  });
