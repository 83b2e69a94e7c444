"""The mail wing: moves that come as text or by mail (``mailin``), played through the play
wing; the reply codes it reads are the news wing's (``server.service.news.replies``), which
puts them in the mails it sends."""
