// A local promptfoo provider with planted answers: it answers the test's `ideal` var when
// the test lists this arm as correct (`correct: "a,b"`), a wrong answer otherwise. Ids in
// config.flaky flip on their second call (run `repeat: 2` with maxConcurrency 1). Each call
// takes a few milliseconds, as a real provider does: promptfoo's latencyMs is whole ms, and
// all-zero latencies make the relative latency change undefined.
const calls = {};
class PlantedProvider {
  constructor(options) {
    this.config = (options && options.config) || {};
    this.providerId = (options && options.id) || 'planted';
  }
  id() { return this.providerId; }
  async callApi(prompt, context) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const vars = (context && context.vars) || {};
    const key = String(vars.id);
    let correct = String(vars.correct || '').split(',').includes(this.config.arm);
    calls[key] = (calls[key] || 0) + 1;
    if (calls[key] === 2 && String(this.config.flaky || '').split(',').includes(key)) {
      correct = !correct;
    }
    const output = correct ? String(vars.ideal) : 'I do not know';
    return {output, cost: 0.0001 * output.length,
            tokenUsage: {total: prompt.length + output.length, prompt: prompt.length,
                         completion: output.length}};
  }
}
module.exports = PlantedProvider;
