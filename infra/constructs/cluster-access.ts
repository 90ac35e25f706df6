/**
 * `ClusterAccess`: the EKS access entry that maps the controllers' IAM role to the Kubernetes group
 * `skiff:controllers`, which `infra/k8s/lambda-rbac.yaml` binds to the `skiff-controllers` ClusterRole. The cluster's
 * authentication mode must be `API` or `API_AND_CONFIG_MAP`.
 */
import * as eks from 'aws-cdk-lib/aws-eks';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/** The Kubernetes group the access entry maps the controllers' role to; `infra/k8s/lambda-rbac.yaml` binds it. */
export const CONTROLLERS_KUBERNETES_GROUP = 'skiff:controllers';

/** Props of {@link ClusterAccess}. */
export interface ClusterAccessProps {
  readonly clusterName: string;
  readonly role: iam.IRole;
}

/** The access entry. */
export class ClusterAccess extends Construct {
  readonly accessEntry: eks.CfnAccessEntry;

  constructor(scope: Construct, id: string, props: ClusterAccessProps) {
    super(scope, id);
    this.accessEntry = new eks.CfnAccessEntry(this, 'AccessEntry', {
      clusterName: props.clusterName,
      principalArn: props.role.roleArn,
      type: 'STANDARD',
      kubernetesGroups: [CONTROLLERS_KUBERNETES_GROUP],
    });
  }
}
