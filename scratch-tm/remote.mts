const tf = await import('@huggingface/transformers');
tf.env.allowRemoteModels = true; tf.env.allowLocalModels = false; tf.env.cacheDir='/tmp/tm/cache2';
const t0 = Date.now();
try { await tf.pipeline('feature-extraction', 'Xenova/all-MiniLM-L6-v2', { dtype: 'fp32' }); } catch (e) { console.log('ERR after', Date.now()-t0, (e as Error).message, (e as any).cause); }
