/**
 * `ControllerNetwork`: where the controller Lambdas run when the cluster's API server is private — the cluster's VPC
 * and subnets, with a security group that may only open HTTPS connections (the API server and the AWS APIs), and,
 * when the cluster security group is given, the rule that lets it accept them.
 */
import { Fn } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import type { SkiffFunctionVpc } from './skiff-function.js';

/** Props of {@link ControllerNetwork}. */
export interface ControllerNetworkProps {
  readonly vpcId: string;
  /** Private subnets routed to the AWS APIs (NAT gateway or VPC endpoints) and the API server. */
  readonly subnetIds: readonly string[];
  /** The cluster security group, to allow HTTPS from the controllers. @default none (allow it yourself) */
  readonly clusterSecurityGroupId?: string;
}

/** The controllers' VPC placement. */
export class ControllerNetwork extends Construct {
  readonly securityGroup: ec2.SecurityGroup;
  readonly placement: SkiffFunctionVpc;

  constructor(scope: Construct, id: string, props: ControllerNetworkProps) {
    super(scope, id);
    // Only the VPC id matters: the functions name their subnets explicitly. (An empty zone list fails CDK's subnet checks.)
    const vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: props.vpcId, availabilityZones: Fn.getAzs() });
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', { vpc, allowAllOutbound: false, description: 'Skiff controllers: HTTPS out to the API server and AWS APIs' });
    this.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS to the Kubernetes API server and AWS APIs');
    if (props.clusterSecurityGroupId !== undefined) {
      new ec2.CfnSecurityGroupIngress(this, 'ApiServerFromControllers', {
        groupId: props.clusterSecurityGroupId,
        sourceSecurityGroupId: this.securityGroup.securityGroupId,
        ipProtocol: 'tcp',
        fromPort: 443,
        toPort: 443,
        description: 'Skiff controllers to the Kubernetes API server',
      });
    }
    this.placement = {
      vpc,
      subnets: { subnets: props.subnetIds.map((subnetId) => ec2.Subnet.fromSubnetId(this, subnetId, subnetId)) },
      securityGroups: [this.securityGroup],
    };
  }
}
