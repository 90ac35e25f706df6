import { describe, expect, it } from 'vitest';
import { QuantityError } from '../../../shared/core/errors.js';
import { cpuMillicores, mebibytes, parseQuantity } from '../../../shared/core/resources/quantity.js';

// The grammar of k8s.io/apimachinery `pkg/api/resource/quantity.go` (`ParseQuantity`) and `suffix.go`.
describe('parseQuantity', () => {
  it.each([
    ['0', 0],
    ['400', 400],
    ['007', 7],
    ['+2', 2],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['1.', 1],
    ['500m', 0.5],
    ['250u', 250e-6],
    ['3n', 3e-9],
    ['2k', 2000],
    ['3M', 3e6],
    ['4G', 4e9],
    ['1T', 1e12],
    ['1P', 1e15],
    ['1E', 1e18],
    ['1Ki', 1024],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['2Ti', 2 * 1024 ** 4],
    ['1Pi', 1024 ** 5],
    ['1Ei', 1024 ** 6],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1e+3', 1000],
    ['15e-1', 1.5],
    ['1.G', 1e9],
  ])('reads %j as Kubernetes does', (text, expected) => {
    expect(parseQuantity(text)).toBeCloseTo(expected, 12);
  });

  it.each([' 500m', '500m ', '500m\t', '\n1Gi', '1Gi\r\n', '\u00a0100m', '100m\u2003'])('refuses %j: ParseQuantity takes no whitespace around a quantity', (text) => {
    expect(() => parseQuantity(text)).toThrow(QuantityError);
    expect(() => parseQuantity(text)).toThrow(/remove the whitespace around it/);
  });

  it.each(['', '5 00m', '500 m', '1ki', '1KI', '1e', '1e3Ki', '1m3', '1.5.5', '0x10', '1Mi2', 'half', '+', '.', '-'])('refuses %j, which is not a quantity', (text) => {
    expect(() => parseQuantity(text)).toThrow(/not a valid Kubernetes quantity/);
  });

  it.each([
    ['512MB', /no suffix "MB"; did you mean "512M" or "512Mi"\?/],
    ['1GiB', /no suffix "GiB"; did you mean "1Gi"\?/],
    ['2K', /no suffix "K"; did you mean "2k" or "2Ki"\?/],
    ['1ki', /no suffix "ki"; did you mean "1Ki"\?/],
    ['500 m', /remove the space between the number and its suffix \("500m"\)/],
    ['100 Mi', /remove the space between the number and its suffix \("100Mi"\)/],
    ['half', /expected a number with an optional suffix, e\.g\. "250m" or "2" for cpu, "512Mi" or "4Gi" for memory$/],
    ['8 GPUs', /expected a number with an optional suffix.*GPUs are a resource of their own: request them as `nvidia\.com\/gpu: 1`/],
  ])('says how to fix %j', (text, message) => {
    expect(() => parseQuantity(text)).toThrow(message);
  });

  it('refuses a negative quantity and one too large to represent', () => {
    expect(() => parseQuantity('-1')).toThrow(/must not be negative/);
    expect(() => parseQuantity('1e400')).toThrow(/is too large/);
    expect(() => parseQuantity(-1)).toThrow(QuantityError);
  });

  it('takes a number as already in base units', () => {
    expect(parseQuantity(3)).toBe(3);
  });
});

describe('cpuMillicores and mebibytes', () => {
  it('convert to canonical units, refusing whitespace as parseQuantity does', () => {
    expect(cpuMillicores('1.5')).toBe(1500);
    expect(cpuMillicores('0.1m')).toBe(1);
    expect(mebibytes('1Gi')).toBe(1024);
    expect(() => cpuMillicores('500m ')).toThrow(QuantityError);
    expect(() => mebibytes(' 1Gi')).toThrow(QuantityError);
  });
});
