/** Small stroke icons drawn inline (no icon font, nothing fetched). */
const PATHS: Record<string, string> = {
  hosts: 'M4 5h16v6H4zM4 13h16v6H4zM7 8h.01M7 16h.01',
  sessions: 'M5 4h14v16H5zM9 8h6M9 12h6M9 16h4',
  code: 'M9 7l-5 5 5 5M15 7l5 5-5 5',
  reports: 'M6 3h9l4 4v14H6zM14 3v5h5M9 13h7M9 17h7',
  settings:
    'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM4 12h2M18 12h2M12 4v2M12 18v2M6.3 6.3l1.4 1.4M16.3 16.3l1.4 1.4M6.3 17.7l1.4-1.4M16.3 7.7l1.4-1.4',
  doctor: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM12 8v8M8 12h8',
  jobs: 'M4 6h16M4 12h10M4 18h6',
  close: 'M6 6l12 12M18 6L6 18',
  sun: 'M12 8a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM12 2v2M12 20v2M2 12h2M20 12h2',
  moon: 'M20 14.5A8 8 0 0 1 9.5 4 8 8 0 1 0 20 14.5z',
};

export function Icon(props: { name: keyof typeof PATHS | string; size?: number }) {
  const size = props.size ?? 18;
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <path d={PATHS[props.name] ?? ''} />
    </svg>
  );
}
