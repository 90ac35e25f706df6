/**
 * The third-party floor of a launching controller's bundle (`lambda-floor.ts` bundles and measures it): every library
 * the provisioner bundles, imported as it imports them (the EC2, SSM, IAM, EventBridge and DynamoDB clients with the
 * commands it sends, client-node's `KubeConfig`, Powertools, `yaml`, `smol-toml`, zod), and no Skiff code. Whatever
 * Skiff does with its own code, a bundle holding these is no smaller and imports no faster.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateFleetCommand, CreateLaunchTemplateCommand, DescribeInstancesCommand, DescribeLaunchTemplatesCommand, EC2Client, TerminateInstancesCommand, paginateDescribeImages, paginateDescribeSecurityGroups, paginateDescribeSubnets, paginateDescribeSpotPriceHistory } from '@aws-sdk/client-ec2';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { AddRoleToInstanceProfileCommand, CreateInstanceProfileCommand, GetInstanceProfileCommand, IAMClient } from '@aws-sdk/client-iam';
import { GetParametersCommand, SSMClient } from '@aws-sdk/client-ssm';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import * as z from 'zod';
/** Everything above, referenced so that the bundler keeps what the provisioner keeps. */
export const all = [Logger, Metrics, DynamoDBClient, CreateFleetCommand, CreateLaunchTemplateCommand, DescribeInstancesCommand, DescribeLaunchTemplatesCommand, EC2Client, TerminateInstancesCommand, paginateDescribeImages, paginateDescribeSecurityGroups, paginateDescribeSubnets, paginateDescribeSpotPriceHistory, EventBridgeClient, PutEventsCommand, AddRoleToInstanceProfileCommand, CreateInstanceProfileCommand, GetInstanceProfileCommand, IAMClient, GetParametersCommand, SSMClient, DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, SignatureV4, KubeConfig, parseToml, stringifyToml, parseYaml, stringifyYaml, z.object, z.string, z.number, z.array, z.union, z.enum, z.record];
