import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/kernel/records.js';
import { applyProgress } from '../../src/web/app/live.js';
import { matches } from '../../src/web/app/screens/audit.js';
import { whereText } from '../../src/web/app/screens/jobs.js';
import { remaining, shortConnection } from '../../src/web/app/format.js';
import { parseRoute, href } from '../../src/web/app/router.js';

const job: Job = {
  id: 'j1',
  door: 'scene',
  kind: 'pipeline',
  status: 'queued',
  progress: {
    step: null,
    currentUnit: 0,
    totalUnits: 0,
    currentStepIndex: 0,
    totalSteps: 0,
    overallPercent: 0,
  },
  warnings: [],
  error: null,
  input: null,
  agent: null,
  createdAt: 1,
  updatedAt: 1,
};

describe('live job progress', () => {
  it('reads a door’s own unit names (scene: currentPage/totalPages) into the job’s progress', () => {
    const next = applyProgress(job, {
      event: 'jobProgress',
      jobId: 'j1',
      step: 'tesseract',
      currentPage: 2,
      totalPages: 4,
      currentStepIndex: 1,
      totalSteps: 3,
      overallPercent: 50,
    });
    expect(next.status).toBe('running');
    expect(next.progress).toEqual({
      step: 'tesseract',
      currentUnit: 2,
      totalUnits: 4,
      currentStepIndex: 1,
      totalSteps: 3,
      overallPercent: 50,
    });
  });
});

describe('job warnings', () => {
  it('say where in words, with pages counted from 1', () => {
    expect(whereText({ pageIndex: 0, stepId: 'llm' })).toBe('page 1, step llm');
    expect(whereText({ unit: 'a' })).toBe('unit a');
  });
});

describe('audit filters', () => {
  const entry = {
    id: 1,
    at: 0,
    connection: 'session:a',
    door: 'notes',
    tool: 'rooqi_read_note',
    argsDigest: '',
    provenance: null,
    result: 'notAuthorized',
    durationMs: 1,
    decision: null,
    rule: null,
    prevHash: null,
    hash: null,
  };
  it('match by door, connection and result, where "error" means any refusal', () => {
    expect(matches(entry, { door: 'notes', connection: 'session:a', result: 'error' })).toBe(true);
    expect(matches(entry, { door: '', connection: '', result: 'ok' })).toBe(false);
    expect(matches(entry, { door: 'scene', connection: '', result: '' })).toBe(false);
    expect(matches(entry, { door: '', connection: 'session:b', result: '' })).toBe(false);
    expect(matches(entry, { door: '', connection: '', result: 'notAuthorized' })).toBe(true);
  });
  it("match by the policy's decision and the rule that made it", () => {
    const asked = { ...entry, decision: 'ask' as const, rule: 'r-1a2b3c4d' };
    const any = { door: '', connection: '', result: '' };
    expect(matches(asked, { ...any, decision: 'ask', rule: 'r-1a2b3c4d' })).toBe(true);
    expect(matches(asked, { ...any, decision: 'deny' })).toBe(false);
    expect(matches(asked, { ...any, rule: 'default:write' })).toBe(false);
    expect(matches(entry, { ...any, decision: 'allow' })).toBe(false);
  });
});

describe('formatting and routes', () => {
  it('shows remaining grant time in minutes and seconds', () => {
    expect(remaining(15 * 60_000)).toBe('15 min 00 s');
    expect(remaining(42_000)).toBe('42 s');
    expect(remaining(0)).toBe('expired');
  });
  it('shortens long connection ids but keeps their kind', () => {
    expect(shortConnection('session:0123456789abcdef')).toBe('session:01234567…');
    expect(shortConnection('principal:local')).toBe('principal:local');
  });
  it("shortens an agent's session or process id but keeps the agent's name whole", () => {
    expect(shortConnection('agent:default/session:ceb86248-598b-4089-822a-d610cf8ac1b7')).toBe(
      'agent:default/session:ceb86248…',
    );
    expect(shortConnection('agent:stdio:claude-desktop-client/process:0123456789abcdef')).toBe(
      'agent:stdio:claude-desktop-client/process:01234567…',
    );
    expect(shortConnection('agent:research-assistant-bot')).toBe('agent:research-assistant-bot');
  });
  it('marks the 8-character labels the server sends as cut', () => {
    expect(shortConnection('agent:default/session:ceb86248')).toBe(
      'agent:default/session:ceb86248…',
    );
    expect(shortConnection('agent:stdio:claude/process:01234567')).toBe(
      'agent:stdio:claude/process:01234567…',
    );
  });
  it('round-trips hash routes with encoded parameters', () => {
    expect(parseRoute(href('notes', 'doc', 'a b/c'))).toMatchObject({
      screen: 'notes',
      params: ['doc', 'a b/c'],
    });
    expect(parseRoute('').screen).toBe('approvals');
    expect(parseRoute('#/audit?door=notes').query.get('door')).toBe('notes');
  });
});
