// The Kubernetes example (deploy/kubernetes/*.yaml) validated against the Kubernetes API schemas, not only
// parsed: each document goes through kubernetes-models' validator for its apiVersion and kind (generated from
// the Kubernetes OpenAPI definitions: types, required fields, enums, formats such as int-or-string ports). A kind
// this test does not know fails it, so a new document gets validated too. The schemas leave objects open, so an
// unknown field is not caught here; test/project/container-files.test.ts checks the fields that matter by name.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server.js';
import { parseYamlDocs } from '../helpers/static-config.js';

interface Validating {
  validate(): void;
}
type Model = new (data: never) => Validating;

const MODELS: Record<string, Model> = {
  'apps/v1 Deployment': Deployment as unknown as Model,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim as unknown as Model,
  'v1 Service': Service as unknown as Model,
  'v1 Secret': Secret as unknown as Model,
};

const DIR = path.join(REPO_ROOT, 'deploy/kubernetes');
const manifests = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));

/* eslint-disable @typescript-eslint/no-explicit-any -- parsed YAML documents */
function validate(doc: any): void {
  const Model = MODELS[`${doc?.apiVersion} ${doc?.kind}`];
  if (!Model) throw new Error(`no schema known here for ${doc?.apiVersion} ${doc?.kind}`);
  new Model(doc as never).validate();
}

describe('deploy/kubernetes validates against the Kubernetes schemas', () => {
  it('has manifests', () => expect(manifests.length).toBeGreaterThan(0));

  for (const file of manifests)
    it(file, () => {
      const docs = parseYamlDocs(readFileSync(path.join(DIR, file), 'utf8')) as any[];
      expect(docs.length).toBeGreaterThan(0);
      for (const doc of docs) expect(() => validate(doc), `${doc.kind} ${doc.metadata?.name}`).not.toThrow();
    });

  it('the validator refuses what the API server would (a control)', () => {
    const [deploy] = (
      parseYamlDocs(readFileSync(path.join(DIR, manifests[0] as string), 'utf8')) as any[]
    ).filter((d) => d.kind === 'Deployment');
    const broken = structuredClone(deploy);
    broken.spec.template.spec.containers[0].readinessProbe.httpGet.port = { name: 'mcp' };
    expect(() => validate(broken)).toThrow();
    const noSelector = structuredClone(deploy);
    delete noSelector.spec.selector;
    expect(() => validate(noSelector)).toThrow();
    const badReplicas = structuredClone(deploy);
    badReplicas.spec.replicas = 'one';
    expect(() => validate(badReplicas)).toThrow();
  });
});
