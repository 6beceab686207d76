import type { Frame, Label, Profile, ProfileFormat, ProfileStats, ValueType } from './profile.ts';

/**
 * Builds a canonical Profile sample by sample, interning frames, stacks and label sets.
 * Used by the text-based importers (folded stacks, .cpuprofile) and by tests.
 */
export class ProfileBuilder {
  private readonly frames: Frame[] = [];
  private readonly frameIds = new Map<string, number>();
  private readonly stackIds = new Map<string, number>();
  private readonly stackOffsets: number[] = [0];
  private readonly stackFrames: number[] = [];
  private readonly sampleStack: number[] = [];
  private readonly values: number[][];
  private readonly sampleLabelSet: number[] = [];
  private readonly labelSets: Label[][] = [[]];
  private readonly labelSetIds = new Map<string, number>();

  constructor(
    private readonly format: ProfileFormat,
    private readonly sampleTypes: ValueType[],
  ) {
    this.values = sampleTypes.map(() => []);
  }

  frameId(name: string, file = '', line = 0, origin: Pick<Frame, 'mapping' | 'standIn'> = {}): number {
    const key = `${name}\u0000${file}\u0000${line}\u0000${origin.mapping ?? '\u0001'}\u0000${origin.standIn ?? ''}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.frames.length;
      const frame: Frame = { name, file, line };
      if (origin.mapping !== undefined) frame.mapping = origin.mapping;
      if (origin.standIn !== undefined) frame.standIn = origin.standIn;
      this.frames.push(frame);
      this.frameIds.set(key, id);
    }
    return id;
  }

  /** Interns a stack given as frame ids, leaf first. */
  stackId(frameIds: readonly number[]): number {
    const key = frameIds.join(',');
    let id = this.stackIds.get(key);
    if (id === undefined) {
      id = this.stackOffsets.length - 1;
      for (const f of frameIds) this.stackFrames.push(f);
      this.stackOffsets.push(this.stackFrames.length);
      this.stackIds.set(key, id);
    }
    return id;
  }

  /** Adds a sample whose stack is given as frames (leaf first) and one value per sample type. */
  addSample(
    stack: readonly (number | (Pick<Frame, 'name'> & Partial<Frame>))[],
    values: readonly number[],
    labels?: Label[],
  ): void {
    if (values.length !== this.sampleTypes.length) {
      throw new Error(`sample has ${values.length} values for ${this.sampleTypes.length} sample types`);
    }
    const ids = stack.map((f) => (typeof f === 'number' ? f : this.frameId(f.name, f.file ?? '', f.line ?? 0, f)));
    this.sampleStack.push(this.stackId(ids));
    values.forEach((v, i) => {
      this.values[i]!.push(v);
    });
    this.sampleLabelSet.push(labels && labels.length > 0 ? this.labelSetId(labels) : 0);
  }

  private labelSetId(labels: Label[]): number {
    const key = JSON.stringify(labels);
    let id = this.labelSetIds.get(key);
    if (id === undefined) {
      id = this.labelSets.length;
      this.labelSets.push(labels);
      this.labelSetIds.set(key, id);
    }
    return id;
  }

  build(
    extra: Partial<
      Omit<
        Profile,
        | 'frames'
        | 'stackOffsets'
        | 'stackFrames'
        | 'sampleStack'
        | 'values'
        | 'sampleLabelSet'
        | 'labelSets'
        | 'format'
        | 'sampleTypes'
      >
    > = {},
  ): Profile {
    const stats: ProfileStats = extra.stats ?? {
      numSamples: this.sampleStack.length,
      numLocations: this.frames.length,
      numFunctions: new Set(this.frames.map((f) => f.name)).size,
      numMappings: 0,
    };
    return {
      format: this.format,
      sampleTypes: this.sampleTypes,
      defaultSampleType: extra.defaultSampleType ?? this.sampleTypes[this.sampleTypes.length - 1]?.type ?? '',
      periodType: extra.periodType ?? null,
      period: extra.period ?? 0,
      timeNanos: extra.timeNanos ?? 0,
      durationNanos: extra.durationNanos ?? 0,
      comments: extra.comments ?? [],
      dropFrames: extra.dropFrames ?? '',
      keepFrames: extra.keepFrames ?? '',
      stats,
      frames: this.frames,
      stackOffsets: Uint32Array.from(this.stackOffsets),
      stackFrames: Uint32Array.from(this.stackFrames),
      sampleStack: Uint32Array.from(this.sampleStack),
      values: this.values.map((v) => Float64Array.from(v)),
      sampleLabelSet: Uint32Array.from(this.sampleLabelSet),
      labelSets: this.labelSets,
    };
  }
}

/**
 * Test DSL: one sample per line, `root;caller;leaf VALUE[,VALUE...]` (root first, as folded stacks are).
 * Sample types default to [{type: "samples", unit: "count"}].
 */
export function profileFromText(
  text: string,
  sampleTypes: ValueType[] = [{ type: 'samples', unit: 'count' }],
): Profile {
  const b = new ProfileBuilder('folded', sampleTypes);
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const sp = line.lastIndexOf(' ');
    const names = line.slice(0, sp).split(';');
    const values = line
      .slice(sp + 1)
      .split(',')
      .map(Number);
    b.addSample(
      names.reverse().map((name) => ({ name })),
      values,
    );
  }
  return b.build();
}
