import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Built into web/dist and served by the Fastify app on the same port (SPA fallback there).
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  server: {
    port: 5173,
    proxy: { '/api': 'http://127.0.0.1:8080', '/healthz': 'http://127.0.0.1:8080' },
  },
});
