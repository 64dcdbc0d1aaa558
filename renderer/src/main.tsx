import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { I18nextProvider } from 'react-i18next';
import { DEFAULT_SETTINGS } from '../../shared/api';
import { TransportProvider } from './api';
import { App } from './App';
import { addNamespaces, initI18n } from './i18n';
import { createTransport } from './transport';
import './styles.css';

const transport = createTransport();
const root = document.getElementById('root')!;

// Settings decide the first paint's language and theme; fetch them before rendering.
const settings = await transport.call('settings.get', {}).catch(() => DEFAULT_SETTINGS);
const i18n = initI18n(settings.language);
// knowledge texts (rule titles…) come from the engine; without them keys show until they arrive
addNamespaces(await transport.call('app.messages', {}).catch(() => ({})));
const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 5_000 } },
});
queryClient.setQueryData(['settings.get', {}], settings);

createRoot(root).render(
  <StrictMode>
    <TransportProvider transport={transport}>
      <QueryClientProvider client={queryClient}>
        <I18nextProvider i18n={i18n}>
          <App />
        </I18nextProvider>
      </QueryClientProvider>
    </TransportProvider>
  </StrictMode>,
);
