/**
 * Client keywords of ssh_config(5) (OpenSSH 10 and the deprecated ones it still accepts), lower
 * case. A line with any other keyword is ignored by the import with a warning naming it, where
 * ssh(1) would refuse the whole file.
 */
export const SSH_CONFIG_KEYWORDS: ReadonlySet<string> = new Set(
  `addkeystoagent addressfamily batchmode bindaddress bindinterface canonicaldomains
  canonicalizefallbacklocal canonicalizehostname canonicalizemaxdots canonicalizepermittedcnames
  casignaturealgorithms certificatefile channeltimeout checkhostip ciphers clearallforwardings
  compression connectionattempts connecttimeout controlmaster controlpath controlpersist
  dynamicforward enableescapecommandline enablesshkeysign escapechar exitonforwardfailure
  fingerprinthash forkafterauthentication forwardagent forwardx11 forwardx11timeout
  forwardx11trusted gatewayports globalknownhostsfile gssapiauthentication
  gssapidelegatecredentials gssapikeyexchange gssapiclientidentity gssapiserveridentity
  gssapirenewalforcesrekey gssapitrustdns hashknownhosts host hostbasedacceptedalgorithms
  hostbasedkeytypes hostbasedauthentication hostkeyalgorithms hostkeyalias hostname
  identitiesonly identityagent identityfile ignoreunknown include ipqos
  kbdinteractiveauthentication kbdinteractivedevices kexalgorithms knownhostscommand
  localcommand localforward loglevel logverbose macs match nohostauthenticationforlocalhost
  numberofpasswordprompts obscurekeystroketiming passwordauthentication permitlocalcommand
  permitremoteopen pkcs11provider port preferredauthentications proxycommand proxyjump
  proxyusefdpass pubkeyacceptedalgorithms pubkeyacceptedkeytypes pubkeyauthentication
  refuseconnection rekeylimit remotecommand remoteforward requesttty requiredrsasize
  revokedhostkeys securitykeyprovider sendenv serveralivecountmax serveraliveinterval
  sessiontype setenv stdinnull streamlocalbindmask streamlocalbindunlink stricthostkeychecking
  syslogfacility tag tcpkeepalive tunnel tunneldevice updatehostkeys usekeychain user
  userknownhostsfile verifyhostkeydns visualhostkey warnweakcrypto xauthlocation
  challengeresponseauthentication useprivilegedport protocol rsaauthentication
  rhostsrsaauthentication cipher useroaming compressionlevel skeyauthentication
  smartcarddevice dsaauthentication kerberosauthentication kerberostgtpassing afstokenpassing
  fallbacktorsh usersh`
    .split(/\s+/)
    .filter(Boolean),
);
